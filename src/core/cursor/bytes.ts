/**
 * @module
 * Compact binary encoding for cursor payloads: unsigned LEB128 varints (numbers up to 2^53),
 * length-prefixed byte strings and UTF-8 strings. Cursors are copied by agents, so every byte counts.
 */
import { PagewiseError } from "../errors.js";

export class ByteWriter {
  #bytes: number[] = [];

  u8(value: number): this {
    this.#bytes.push(value & 0xff);
    return this;
  }

  /** Unsigned varint; `value` must be a safe non-negative integer. */
  uint(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a uint: ${value}`);
    let v = value;
    while (v >= 0x80) {
      this.#bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.#bytes.push(v);
    return this;
  }

  bytes(value: Uint8Array): this {
    this.uint(value.length);
    for (const b of value) this.#bytes.push(b);
    return this;
  }

  /** Raw bytes without a length prefix (fixed-size fields). */
  raw(value: Uint8Array): this {
    for (const b of value) this.#bytes.push(b);
    return this;
  }

  string(value: string): this {
    return this.bytes(Buffer.from(value, "utf8"));
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

/** INVALID_CURSOR for a payload that does not decode: the one error every cursor decoder throws. */
export function malformedCursor(): PagewiseError {
  return new PagewiseError("INVALID_CURSOR", "The cursor is malformed.", {
    hint: "Pass next_cursor exactly as it was returned, or start again without a cursor.",
  });
}

export class ByteReader {
  #bytes: Uint8Array;
  #pos = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  get done(): boolean {
    return this.#pos >= this.#bytes.length;
  }

  u8(): number {
    if (this.#pos >= this.#bytes.length) throw malformedCursor();
    return this.#bytes[this.#pos++]!;
  }

  uint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (!Number.isSafeInteger(result)) throw malformedCursor();
        return result;
      }
      scale *= 0x80;
    }
    throw malformedCursor();
  }

  raw(length: number): Uint8Array {
    if (this.#pos + length > this.#bytes.length) throw malformedCursor();
    const out = this.#bytes.subarray(this.#pos, this.#pos + length);
    this.#pos += length;
    return out;
  }

  bytes(): Uint8Array {
    return this.raw(this.uint());
  }

  string(): string {
    return Buffer.from(this.bytes()).toString("utf8");
  }

  /** Throws unless every byte was consumed (a payload with trailing bytes is not ours). */
  end(): void {
    if (!this.done) throw malformedCursor();
  }
}
