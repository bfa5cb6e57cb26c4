/**
 * @module
 * Byte constants and lookup tables shared by the tokenizer and the text helpers.
 */

export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const RS = 0x1e;
export const QUOTE = 0x22;
export const PLUS = 0x2b;
export const COMMA = 0x2c;
export const MINUS = 0x2d;
export const DOT = 0x2e;
export const SLASH = 0x2f;
export const DIGIT_0 = 0x30;
export const DIGIT_1 = 0x31;
export const DIGIT_9 = 0x39;
export const COLON = 0x3a;
export const UPPER_E = 0x45;
export const OPEN_BRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const CLOSE_BRACKET = 0x5d;
export const LOWER_B = 0x62;
export const LOWER_E = 0x65;
export const LOWER_F = 0x66;
export const LOWER_N = 0x6e;
export const LOWER_R = 0x72;
export const LOWER_T = 0x74;
export const LOWER_U = 0x75;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const BOM_0 = 0xef;
export const BOM_1 = 0xbb;
export const BOM_2 = 0xbf;

/** 1 for the four JSON whitespace bytes (space, tab, LF, CR). */
export const IS_WS: Uint8Array = (() => {
  const t = new Uint8Array(256);
  t[SPACE] = 1;
  t[TAB] = 1;
  t[LF] = 1;
  t[CR] = 1;
  return t;
})();

/** Inside a string: 0 for a byte copied as is (printable ASCII but `"` and `\`), 1 otherwise. */
export const STRING_STOP: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let b = 0; b < 256; b++)
    t[b] = b < 0x20 || b >= 0x80 || b === QUOTE || b === BACKSLASH ? 1 : 0;
  return t;
})();

/** Value of a hexadecimal digit, or 255. */
export const HEX_VALUE: Uint8Array = (() => {
  const t = new Uint8Array(256).fill(255);
  for (let d = 0; d < 10; d++) t[DIGIT_0 + d] = d;
  for (let d = 0; d < 6; d++) {
    t[0x41 + d] = 10 + d;
    t[0x61 + d] = 10 + d;
  }
  return t;
})();

export function isDigit(b: number): boolean {
  return b >= DIGIT_0 && b <= DIGIT_9;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The string value of a validated JSON string's content (the bytes between its quotes).
 * `hasEscape` / `hasNonAscii` let plain strings skip the slow path.
 */
export function decodeStringContent(
  bytes: Uint8Array,
  start: number,
  end: number,
  hasEscape: boolean,
  hasNonAscii: boolean,
): string {
  if (!hasEscape) {
    if (!hasNonAscii) return asciiText(bytes, start, end);
    return UTF8.decode(bytes.subarray(start, end));
  }
  let out = "";
  let runStart = start;
  let i = start;
  while (i < end) {
    if (bytes[i] !== BACKSLASH) {
      i++;
      continue;
    }
    if (i > runStart) out += UTF8.decode(bytes.subarray(runStart, i));
    const e = bytes[i + 1];
    i += 2;
    switch (e) {
      case LOWER_B:
        out += "\b";
        break;
      case LOWER_F:
        out += "\f";
        break;
      case LOWER_N:
        out += "\n";
        break;
      case LOWER_R:
        out += "\r";
        break;
      case LOWER_T:
        out += "\t";
        break;
      case LOWER_U: {
        const code =
          (HEX_VALUE[bytes[i]] << 12) |
          (HEX_VALUE[bytes[i + 1]] << 8) |
          (HEX_VALUE[bytes[i + 2]] << 4) |
          HEX_VALUE[bytes[i + 3]];
        out += String.fromCharCode(code);
        i += 4;
        break;
      }
      default:
        out += String.fromCharCode(e);
    }
    runStart = i;
  }
  if (end > runStart) out += UTF8.decode(bytes.subarray(runStart, end));
  return out;
}

/** The text of ASCII bytes `[start, end)`. */
export function asciiText(bytes: Uint8Array, start: number, end: number): string {
  // Perf: short ASCII runs (member names) are the common case; fromCharCode beats a TextDecoder
  // call. Concatenation only below 13 characters: from 13 on V8 builds a rope of one node per
  // character, which a kept name (duplicate detection) would hold until flattened.
  const len = end - start;
  if (len <= 12) {
    let s = "";
    for (let i = start; i < end; i++) s += String.fromCharCode(bytes[i]);
    return s;
  }
  if (len <= 64) return String.fromCharCode.apply(null, bytes.subarray(start, end) as never);
  return latin1(bytes, start, end);
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString("latin1");
}
