/**
 * @module
 * The member names of the last object seen at one nesting level, as spelled in the source. Records
 * repeat their shape, so the tokenizer compares each name's bytes with the name at the same place
 * in the previous object: while every name so far matches, the name is known (no decoding) and is
 * known to be new in its object (the previous object had these names without a duplicate), so
 * duplicate detection costs one byte comparison per name.
 */

/** Names kept per level: a longer object follows its shape for this many names. */
const SHAPE_MAX_NAMES = 64;
/** Source bytes of the kept names per level. */
const SHAPE_MAX_BYTES = 2048;

export class KeyShape {
  /** Names in the shape. */
  count = 0;
  /** The decoded names. */
  readonly names: string[] = [];
  /** What duplicate detection keeps of each name (see the tokenizer's `nameToken`). */
  readonly tokens: string[] = [];
  /** Name j is `bytes[ends[j], ends[j + 1])`, without its quotes. */
  readonly #ends = new Int32Array(SHAPE_MAX_NAMES + 1);
  #bytes = new Uint8Array(256);

  /** Whether name `k` (< count) is spelled exactly as `src[start, end)`. */
  matches(k: number, src: Uint8Array, start: number, end: number): boolean {
    const from = this.#ends[k];
    const len = this.#ends[k + 1] - from;
    if (len !== end - start) return false;
    const bytes = this.#bytes;
    for (let i = 0; i < len; i++) if (bytes[from + i] !== src[start + i]) return false;
    return true;
  }

  /** Adds a name after the last one; false when the shape is full (it then stays as it is). */
  append(src: Uint8Array, start: number, end: number, name: string, token: string): boolean {
    const k = this.count;
    if (k >= SHAPE_MAX_NAMES) return false;
    const at = this.#ends[k];
    const len = end - start;
    if (at + len > SHAPE_MAX_BYTES) return false;
    if (at + len > this.#bytes.length) {
      const grown = new Uint8Array(SHAPE_MAX_BYTES);
      grown.set(this.#bytes.subarray(0, at));
      this.#bytes = grown;
    }
    const bytes = this.#bytes;
    for (let i = 0; i < len; i++) bytes[at + i] = src[start + i];
    this.#ends[k + 1] = at + len;
    this.names[k] = name;
    this.tokens[k] = token;
    this.count = k + 1;
    return true;
  }
}
