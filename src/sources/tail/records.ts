/**
 * @module
 * Records (lines) of a file, found by scanning aligned blocks backward or forward from a byte
 * offset. Never reads the whole file: a scan touches only the blocks of the records it yields.
 */
import { completeUtf8Length } from "../../core/index.js";
import { TAIL_BLOCK_BYTES, TAIL_CACHED_BLOCKS } from "../limits.js";
import type { ByteSource } from "../shared/byte-source.js";

const LF = 0x0a;
const CR = 0x0d;

/** Aligned block cache over a byte source of fixed size. */
export class BlockReader {
  readonly size: number;
  readonly #source: ByteSource;
  readonly #blocks = new Map<number, Buffer>();
  /** Bytes read from the file (for benchmarks and tests). */
  bytesRead = 0;

  constructor(source: ByteSource, size: number) {
    this.#source = source;
    this.size = size;
  }

  async block(index: number): Promise<Buffer> {
    const hit = this.#blocks.get(index);
    if (hit) return hit;
    const start = index * TAIL_BLOCK_BYTES;
    const length = Math.min(TAIL_BLOCK_BYTES, this.size - start);
    const bytes = await this.#source.read(start, length);
    this.bytesRead += bytes.length;
    this.#blocks.set(index, bytes);
    if (this.#blocks.size > TAIL_CACHED_BLOCKS) {
      const oldest = this.#blocks.keys().next().value;
      if (oldest !== undefined) this.#blocks.delete(oldest);
    }
    return bytes;
  }

  /** Bytes `[start, end)`, clipped to the file. */
  async range(start: number, end: number): Promise<Buffer> {
    const from = Math.max(0, start);
    const to = Math.min(this.size, end);
    if (to <= from) return Buffer.alloc(0);
    const first = Math.floor(from / TAIL_BLOCK_BYTES);
    const last = Math.floor((to - 1) / TAIL_BLOCK_BYTES);
    if (first === last) {
      const b = await this.block(first);
      return b.subarray(from - first * TAIL_BLOCK_BYTES, to - first * TAIL_BLOCK_BYTES);
    }
    const parts: Buffer[] = [];
    for (let i = first; i <= last; i++) {
      const b = await this.block(i);
      const base = i * TAIL_BLOCK_BYTES;
      parts.push(b.subarray(Math.max(0, from - base), Math.min(b.length, to - base)));
    }
    return Buffer.concat(parts);
  }

  /** Offset of the last LF in `[lo, hi)`, or -1. */
  async lastLf(lo: number, hi: number): Promise<number> {
    let end = Math.min(hi, this.size);
    while (end > lo) {
      const index = Math.floor((end - 1) / TAIL_BLOCK_BYTES);
      const base = index * TAIL_BLOCK_BYTES;
      const b = await this.block(index);
      // Perf: native lastIndexOf over the block instead of a byte loop.
      const at = b.lastIndexOf(LF, end - 1 - base);
      if (at >= 0 && base + at >= lo) return base + at;
      end = base;
    }
    return -1;
  }

  /** Offset of the first LF in `[lo, hi)`, or -1. */
  async firstLf(lo: number, hi: number): Promise<number> {
    let start = Math.max(0, lo);
    const stop = Math.min(hi, this.size);
    while (start < stop) {
      const index = Math.floor(start / TAIL_BLOCK_BYTES);
      const base = index * TAIL_BLOCK_BYTES;
      const b = await this.block(index);
      const at = b.indexOf(LF, start - base);
      if (at >= 0) return base + at < stop ? base + at : -1;
      start = base + b.length;
      if (b.length === 0) break;
    }
    return -1;
  }

  async byteAt(offset: number): Promise<number> {
    const index = Math.floor(offset / TAIL_BLOCK_BYTES);
    const b = await this.block(index);
    return b[offset - index * TAIL_BLOCK_BYTES]!;
  }
}

/** One record: `[start, contentEnd)` is its text, `[contentEnd, end)` its terminator. */
export interface RecordSpan {
  readonly start: number;
  readonly contentEnd: number;
  readonly end: number;
  /** No terminator yet: the last record of the file, possibly still being written. */
  readonly partial: boolean;
}

async function spanEndingAt(reader: BlockReader, start: number, end: number): Promise<RecordSpan> {
  // `end` is either the file's size (a partial record) or just after an LF.
  if (end > start && (await reader.byteAt(end - 1)) === LF) {
    const crlf = end - 1 > start && (await reader.byteAt(end - 2)) === CR;
    return { start, contentEnd: end - (crlf ? 2 : 1), end, partial: false };
  }
  // A partial record may end inside a character still being written: leave those bytes for later.
  const last = await reader.range(Math.max(start, end - 4), end);
  const cut = end - (last.length - completeUtf8Length(last, last.length));
  return { start, contentEnd: cut, end: cut, partial: true };
}

/**
 * The record that ends at `end` (exclusive, terminator included): `end` must be a record boundary
 * (just after an LF) or the file's size. Returns undefined at offset 0.
 */
export async function recordBefore(
  reader: BlockReader,
  end: number,
): Promise<RecordSpan | undefined> {
  if (end <= 0) return undefined;
  // The record's own terminator (if any) is at end - 1; its start follows the LF before that.
  const terminated = (await reader.byteAt(end - 1)) === LF;
  const searchEnd = terminated ? end - 1 : end;
  const lf = await reader.lastLf(0, searchEnd);
  return spanEndingAt(reader, lf + 1, end);
}

/** The record that starts at `start` (a record boundary), or undefined at the file's end. */
export async function recordAt(
  reader: BlockReader,
  start: number,
): Promise<RecordSpan | undefined> {
  if (start >= reader.size) return undefined;
  const lf = await reader.firstLf(start, reader.size);
  return spanEndingAt(reader, start, lf < 0 ? reader.size : lf + 1);
}
