/**
 * @module
 * The reader `json_read` and the JSON stream read through: matches lie close together, so the
 * engine's reads and the values they select are served from one window of the file.
 */
import type { ByteReader } from "../../json/reader.js";
import { JSON_VALUE_WINDOW_BYTES } from "../limits.js";

/**
 * A reader that keeps the last window it read, so that the engine's reads and the many small
 * values that lie close together cost one positional read per window instead of one per value.
 */
export class ValueWindow implements ByteReader {
  readonly size: number;
  /** Source offset of `bytes[0]`. */
  start = 0;
  bytes: Uint8Array = new Uint8Array(0);
  constructor(readonly inner: ByteReader) {
    this.size = inner.size;
  }

  async read(position: number, length: number): Promise<Uint8Array> {
    const end = Math.min(this.size, position + length);
    const at = this.offsetOf(position, end);
    if (at >= 0) return this.bytes.subarray(at, at + (end - position));
    if (length > JSON_VALUE_WINDOW_BYTES) return this.inner.read(position, length);
    this.bytes = await this.inner.read(position, JSON_VALUE_WINDOW_BYTES);
    this.start = position;
    return this.bytes.subarray(0, end - position);
  }

  /** Where source bytes `[from, to)` are in `bytes`, or -1 when the window does not hold them. */
  offsetOf(from: number, to: number): number {
    const start = this.start;
    return from >= start && to <= start + this.bytes.length ? from - start : -1;
  }
}
