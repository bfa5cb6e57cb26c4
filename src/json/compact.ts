/**
 * @module
 * `compactJsonText`: a value's source text without insignificant whitespace, every other byte kept
 * as spelled (numbers, escapes and non-ASCII characters unchanged).
 */

import { asciiText, BACKSLASH, IS_WS, QUOTE } from "./bytes.js";

const UTF8 = new TextDecoder("utf-8");

/** Drops whitespace outside strings from validated JSON text and decodes it. */
export function compactJsonText(bytes: Uint8Array): string {
  const out = new Uint8Array(bytes.length);
  let j = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      out[j++] = b;
      if (escaped) escaped = false;
      else if (b === BACKSLASH) escaped = true;
      else if (b === QUOTE) inString = false;
    } else if (IS_WS[b] !== 1) {
      out[j++] = b;
      if (b === QUOTE) inString = true;
    }
  }
  return UTF8.decode(out.subarray(0, j));
}

/**
 * `compactJsonText` of `bytes[start, end)`. Perf: most matched values (numbers, short strings,
 * compact records) have no whitespace to drop: they are decoded as they are, without a copy, and
 * ASCII ones without a decoder call.
 */
export function compactJsonRange(bytes: Uint8Array, start: number, end: number): string {
  let ascii = true;
  let inString = false;
  let escaped = false;
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b >= 0x80) ascii = false;
    else if (inString) {
      if (escaped) escaped = false;
      else if (b === BACKSLASH) escaped = true;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (IS_WS[b] === 1) return compactJsonText(bytes.subarray(start, end));
  }
  return ascii ? asciiText(bytes, start, end) : UTF8.decode(bytes.subarray(start, end));
}

/**
 * `compactJsonText` as bytes, written into a buffer, for a value that may arrive in pieces: the
 * compactor remembers whether a piece ended inside a string. Perf: `pagewise json` into a pipe
 * copies each match's bytes to the output buffer without decoding them.
 */
export class JsonCompactor {
  #inString = false;
  #escaped = false;

  /**
   * Writes `bytes[start, end)` without insignificant whitespace into `out` at `at` (which must
   * have room for `end - start` bytes) and returns where it ended.
   */
  into(bytes: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
    let j = at;
    let inString = this.#inString;
    let escaped = this.#escaped;
    for (let i = start; i < end; i++) {
      const b = bytes[i]!;
      if (inString) {
        out[j++] = b;
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
      } else if (IS_WS[b] !== 1) {
        out[j++] = b;
        if (b === QUOTE) inString = true;
      }
    }
    this.#inString = inString;
    this.#escaped = escaped;
    return j;
  }
}
