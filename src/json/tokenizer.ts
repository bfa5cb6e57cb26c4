/**
 * @module
 * A byte-level, push-driven, strict JSON tokenizer (RFC 8259) with JSONL and JSON-seq (RFC 7464)
 * framing.
 *
 * Why hand-written rather than a library: the engine needs (1) the absolute byte offset of every
 * token, so matched values are copied from the source exactly as spelled and a query can resume by
 * seeking; (2) to start mid-document from a known container stack, without reading earlier bytes;
 * (3) strict validation with precise locations (overlong UTF-8, encoded surrogates, lone `\u`
 * surrogates, duplicate names, comments, trailing commas, leading zeros); (4) bounded memory whatever
 * the input (iterative, limits on depth, string, number, record and member counts); and (5) speed.
 * `JSON.parse` needs the whole text and loses spelling and offsets; the streaming parsers on npm
 * (@streamparser/json, stream-json, clarinet) either re-serialize values, validate loosely, accept
 * duplicate names, or cannot re-enter at an offset.
 *
 * The tokenizer is a state machine over `Uint8Array` chunks; the same input fed whole, in arbitrary
 * pieces or one byte at a time gives the same events and errors. It pushes events to a
 * {@link TokenSink}: `open`/`close` of containers, `key` for member names (always decoded: names are
 * compared for duplicates), `scalar` for strings, numbers and literals (the text is available from
 * {@link Tokenizer.scalarString} / {@link Tokenizer.scalarText} during the call, when
 * `wantScalarBytes` was set before the token began).
 */

import * as crypto from "node:crypto";
import { PagewiseError } from "../core/index.js";
import * as bytes from "./bytes.js";
import { KeyShape } from "./key-shape.js";
import type { JsonLimits } from "./limits.js";
import { escapePointerToken } from "./pointer-text.js";

// Perf: module-local bindings. Test runners that rewrite imports into property reads (vitest)
// would otherwise pay a getter call per byte in the hot loops.
const {
  BACKSLASH,
  BOM_0,
  BOM_1,
  BOM_2,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  CR,
  DIGIT_0,
  DIGIT_1,
  DIGIT_9,
  DOT,
  decodeStringContent,
  HEX_VALUE,
  IS_WS,
  LF,
  LOWER_B,
  LOWER_E,
  LOWER_F,
  LOWER_N,
  LOWER_R,
  LOWER_T,
  LOWER_U,
  MINUS,
  OPEN_BRACE,
  OPEN_BRACKET,
  PLUS,
  QUOTE,
  RS,
  SLASH,
  SPACE,
  STRING_STOP,
  TAB,
  UPPER_E,
} = bytes;

export type JsonFormat = "json" | "jsonl" | "json-seq";

export const KIND_OBJECT = 1;
export const KIND_ARRAY = 2;
/** The virtual array of JSONL / JSON-seq records (level 0). */
export const KIND_SEQ = 3;

export const T_STRING = 1;
export const T_NUMBER = 2;
export const T_TRUE = 3;
export const T_FALSE = 4;
export const T_NULL = 5;

/** Receives tokens. Offsets are absolute byte offsets in the source; `end` is exclusive. */
export interface TokenSink {
  /** A container began at `start`; `tok.depth` already counts it. */
  open(kind: number, start: number): void;
  /** The innermost container ended just before `end`; `tok.depth` no longer counts it. */
  close(end: number): void;
  /** A member name (decoded) whose opening quote is at `start`. */
  key(name: string, start: number): void;
  /** A string, number or literal value occupying [start, end). */
  scalar(type: number, start: number, end: number): void;
}

/** One level of a container stack used to re-enter a document (see {@link Tokenizer.resumeAfterValue}). */
export interface ResumeLevel {
  kind: number;
  /** Index of the current (last) element of an array / record of the sequence. */
  index: number;
  /** Current member name of an object. */
  key: string;
  /** Byte offset of that member name's opening quote. */
  keyAt: number;
}

// States. Perf: small integers in one switch; V8 compiles it to a jump table.
const S_VALUE = 0; // a value is expected (after ':' or ',' in an array, or a document start)
const S_ARR_FIRST = 1; // after '[': a value or ']'
const S_OBJ_FIRST = 2; // after '{': a name or '}'
const S_OBJ_KEY = 3; // after ',' in an object: a name
const S_COLON = 4; // after a name: ':'
const S_AFTER = 5; // after a value in a container: ',' or the closer
const S_STRING = 6;
const S_STR_ESC = 7;
const S_STR_U = 8;
const S_STR_LOW_BS = 9; // after a high surrogate escape: '\' of the low one
const S_STR_LOW_U = 10; // ... then 'u'
const S_STR_UTF8 = 11; // continuation bytes of a multi-byte character
const S_NUM_MINUS = 12;
const S_NUM_ZERO = 13;
const S_NUM_INT = 14;
const S_NUM_DOT = 15;
const S_NUM_FRAC = 16;
const S_NUM_E = 17;
const S_NUM_ESIGN = 18;
const S_NUM_EXP = 19;
const S_LIT = 20;
const S_DOC_END = 21; // json: after the root value
const S_LINE_START = 22; // jsonl: at the start of a line
const S_LINE_WS = 23; // jsonl: whitespace at the start of a line
const S_LINE_END = 24; // jsonl: after a record's value, before its LF
const S_SEQ_START = 25; // json-seq: RS or end expected
const S_SEQ_AFTER_RS = 26; // json-seq: after RS, the record's value expected
const S_SEQ_END = 27; // json-seq: after a record's value, its LF expected
const S_SEQ_END_LF = 28; // json-seq: LF seen; more whitespace, RS or end
const S_BOM = 29; // a UTF-8 byte order mark at offset 0
const S_SLASH = 30; // a '/' ended the previous chunk: the next byte tells a comment from a stray '/'

const LIT_TRUE = new Uint8Array([0x74, 0x72, 0x75, 0x65]);
const LIT_FALSE = new Uint8Array([0x66, 0x61, 0x6c, 0x73, 0x65]);
const LIT_NULL = new Uint8Array([0x6e, 0x75, 0x6c, 0x6c]);

const SMALL_KEY_SET = 16;
/** A name set larger than this is dropped when its object ends rather than cleared for reuse. */
const BIG_KEY_SET_KEPT = 4096;
/**
 * Member names up to this many UTF-16 units are kept as they are for duplicate detection; longer
 * ones are kept as a SHA-256 digest ({@link nameToken}), so memory grows with the number of
 * members, never with the length of their names.
 */
const KEPT_NAME_CHARS = 32;
const ASTERISK = 0x2a;
const KEY_CACHE_SLOTS = 1024;
/** {@link Tokenizer.quietInside} not in effect. */
const NOT_QUIET = 0x7fffffff;
// How an open object's names relate to its level's KeyShape.
/** Every name so far is the shape's name at the same place: names are neither decoded nor kept. */
const SHAPE_ON = 2;
/** The names left the shape, which now follows this object (its names are appended). */
const SHAPE_FOLLOW = 1;
/** The shape does not follow this object (a resumed object, or a full shape). */
const SHAPE_OFF = 0;
const KEY_CACHE_WIDTH = 24;

/** A sink that ignores everything (validation). */
export const NULL_SINK: TokenSink = {
  open() {},
  close() {},
  key() {},
  scalar() {},
};

export class Tokenizer {
  readonly format: JsonFormat;
  readonly limits: JsonLimits;
  sink: TokenSink;
  /** Set by the sink: keep the bytes of string values (for {@link scalarString}). */
  wantScalarBytes = false;

  /** Open levels (containers, plus the record sequence at level 0 for JSONL / JSON-seq). */
  depth = 0;
  /** Events at a depth above this are not sent (see {@link quietInside}). */
  #quiet = NOT_QUIET;
  readonly kinds: Uint8Array;
  readonly index: Float64Array;
  readonly members: Float64Array;
  readonly keys: string[];
  readonly keyAt: Float64Array;
  /** Per level: the first names of the object (fixed-size, reused; `#smallCount` are in use). */
  #smallKeys: string[][];
  #smallCount: Int32Array;
  /** Per level: every name, once the object has more than {@link SMALL_KEY_SET}. */
  #bigKeys: (Set<string> | null)[];
  /** Per level: the names of the last object there, and how the open object relates to them. */
  #shapes: KeyShape[] = [];
  #shapeMode: Uint8Array;

  #state: number;
  #base = 0; // absolute offset of chunk[0]
  #chunk: Uint8Array = new Uint8Array(0);
  #failed: PagewiseError | null = null;
  #ended = false;

  // Current token.
  #tokStart = 0;
  #strIsKey = false;
  #strEsc = false;
  #strHigh = false;
  #keep = false; // bytes of this token are kept across chunks
  #carry: Uint8Array = new Uint8Array(256);
  #carryLen = 0;
  #carrying = false; // the token began in an earlier chunk (its prefix is in carry)
  #u8need = 0;
  #u8lo = 0x80;
  #u8hi = 0xbf;
  #uCount = 0;
  #uVal = 0;
  #wantLow = false;
  #lit: Uint8Array = LIT_TRUE;
  #litIdx = 0;
  #litType = 0;
  #scalarEndIdx = 0; // index in the chunk just after the scalar being reported

  // Positions.
  #line = 1;
  #lineStart = 0;
  #recordStart = 0;
  #newlineAfterRoot = false;
  #realDepthOffset: number;

  constructor(format: JsonFormat, limits: JsonLimits, sink: TokenSink = NULL_SINK) {
    this.format = format;
    this.limits = limits;
    this.sink = sink;
    const cap = limits.maxDepth + 2;
    this.kinds = new Uint8Array(cap);
    this.index = new Float64Array(cap);
    this.members = new Float64Array(cap);
    this.keyAt = new Float64Array(cap);
    this.keys = new Array<string>(cap).fill("");
    this.#smallKeys = [];
    this.#smallCount = new Int32Array(cap);
    this.#bigKeys = [];
    this.#shapeMode = new Uint8Array(cap);
    this.#realDepthOffset = format === "json" ? 0 : 1;
    this.#state = format === "json" ? S_VALUE : format === "jsonl" ? S_LINE_START : S_SEQ_START;
  }

  /** Starts at byte 0. For JSONL / JSON-seq, opens the record sequence (`open(KIND_SEQ, 0)`). */
  start(): void {
    if (this.format !== "json") {
      this.#push(KIND_SEQ);
      this.sink.open(KIND_SEQ, 0);
    }
  }

  /**
   * Re-enters a document at `offset`, just after a value whose enclosing containers are `levels`
   * (outermost first; for JSONL / JSON-seq level 0 is the record sequence). No event is sent for the
   * restored levels. Duplicate names are then checked only among members that follow `offset`.
   */
  resumeAfterValue(offset: number, levels: readonly ResumeLevel[]): void {
    this.#base = offset;
    this.#lineStart = offset;
    this.#line = 1;
    for (const level of levels) {
      const d = this.#push(level.kind);
      this.index[d] = level.index;
      if (level.kind === KIND_OBJECT) {
        // The names before the offset are not known: the shape cannot vouch for this object.
        this.#shapeMode[d] = SHAPE_OFF;
        this.members[d] = 1;
        this.keys[d] = level.key;
        this.keyAt[d] = level.keyAt;
      } else {
        this.members[d] = level.index + 1;
      }
    }
    if (this.depth === 0) {
      if (this.format !== "json") throw new RangeError("a resume point needs the record level");
    }
    this.#recordStart = offset;
    this.#afterValue();
  }

  /** UTF-16 units of member names kept for duplicate detection in the open objects. */
  get retainedNameChars(): number {
    let total = 0;
    for (let d = 0; d < this.depth; d++) {
      if (this.kinds[d] !== KIND_OBJECT) continue;
      if (this.#shapeMode[d] === SHAPE_ON) {
        for (let k = 0; k < this.members[d]; k++) total += this.#shapes[d].tokens[k].length;
      }
      for (let k = 0; k < this.#smallCount[d]; k++) total += this.#smallKeys[d][k].length;
      for (const k of this.#bigKeys[d] ?? []) total += k.length;
    }
    return total;
  }

  /**
   * The sink needs no more events from inside the container open at `level` (its members and
   * everything in them): they are still tokenized and checked, but not sent, until that container
   * ends (its own `close` is sent). Perf: a query that has selected all it can from a record
   * skips the events of the rest of it.
   */
  quietInside(level: number): void {
    if (level < this.#quiet) this.#quiet = level;
  }

  /** Absolute offset of the next byte to be fed. */
  get position(): number {
    return this.#base;
  }

  /** Line (1-based, counted from where this tokenizer started) and offset of its first byte. */
  get line(): number {
    return this.#line;
  }

  /** The string value of the current string scalar (valid during `scalar`, when `wantScalarBytes` was set). */
  scalarString(): string {
    this.#tokenBytes();
    return decodeStringContent(
      this.#tbBytes,
      this.#tbStart + 1,
      this.#tbEnd - 1,
      this.#strEsc,
      this.#strHigh,
    );
  }

  /** The source text of the current number scalar (valid during `scalar`). */
  scalarText(): string {
    this.#tokenBytes();
    const bytes = this.#tbBytes;
    let s = "";
    for (let i = this.#tbStart; i < this.#tbEnd; i++) s += String.fromCharCode(bytes[i]);
    return s;
  }

  // Perf: the current token's bytes are returned through fields, not a fresh object per token.
  #tbBytes: Uint8Array = new Uint8Array(0);
  #tbStart = 0;
  #tbEnd = 0;

  #tokenBytes(): void {
    const end = this.#scalarEndIdx;
    if (!this.#carrying) {
      this.#tbBytes = this.#chunk;
      this.#tbStart = this.#tokStart - this.#base;
      this.#tbEnd = end;
      return;
    }
    this.#appendCarry(this.#chunk, 0, end);
    this.#tbBytes = this.#carry;
    this.#tbStart = 0;
    this.#tbEnd = this.#carryLen;
    this.#carryLen -= end; // keep the carry as it was, should the text be asked for twice
  }

  /**
   * The current member name. Perf: names repeat (records share a schema), so short plain names go
   * through a small cache keyed by a hash of their bytes; a hit allocates nothing.
   */
  #keyString(): string {
    this.#tokenBytes();
    const bytes = this.#tbBytes;
    const start = this.#tbStart + 1;
    const end = this.#tbEnd - 1;
    const len = end - start;
    if (this.#strEsc || this.#strHigh || len > KEY_CACHE_WIDTH) {
      return decodeStringContent(bytes, start, end, this.#strEsc, this.#strHigh);
    }
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
    const slot = (h >>> 0) & (KEY_CACHE_SLOTS - 1);
    const cached = this.#keyCache[slot];
    if (cached !== undefined && this.#keyCacheLen[slot] === len) {
      const at = slot * KEY_CACHE_WIDTH;
      const cb = this.#keyCacheBytes;
      let same = true;
      for (let i = 0; i < len; i++) {
        if (cb[at + i] !== bytes[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return cached;
    }
    const name = decodeStringContent(bytes, start, end, false, false);
    this.#keyCache[slot] = name;
    this.#keyCacheLen[slot] = len;
    this.#keyCacheBytes.set(bytes.subarray(start, end), slot * KEY_CACHE_WIDTH);
    return name;
  }

  #keyCache: (string | undefined)[] = new Array<string | undefined>(KEY_CACHE_SLOTS);
  #keyCacheLen = new Uint8Array(KEY_CACHE_SLOTS);
  #keyCacheBytes = new Uint8Array(KEY_CACHE_SLOTS * KEY_CACHE_WIDTH);

  /** Feeds the next bytes. Throws a PagewiseError on the first problem (and on every later call). */
  feed(chunk: Uint8Array): void {
    if (this.#failed) throw this.#failed;
    try {
      this.#run(chunk);
    } catch (e) {
      if (e instanceof PagewiseError) this.#failed = e;
      throw e;
    }
  }

  /** Signals the end of the input; checks that the text ended where a value may end. */
  end(): void {
    if (this.#failed) throw this.#failed;
    if (this.#ended) return;
    try {
      this.#finish();
      this.#ended = true;
    } catch (e) {
      if (e instanceof PagewiseError) this.#failed = e;
      throw e;
    }
  }

  // ---------------------------------------------------------------------------------------------

  #push(kind: number, offset = this.#base): number {
    const d = this.depth;
    if (d - this.#realDepthOffset + (kind === KIND_SEQ ? 0 : 1) > this.limits.maxDepth) {
      this.#limit(
        "max_depth",
        this.limits.maxDepth,
        d - this.#realDepthOffset + 1,
        offset,
        "Nesting is too deep",
      );
    }
    this.kinds[d] = kind;
    this.index[d] = -1;
    this.members[d] = 0;
    if (kind === KIND_OBJECT) {
      // Perf: the arrays are reused from object to object (records repeat their shape).
      if (this.#smallKeys[d] === undefined)
        this.#smallKeys[d] = new Array<string>(SMALL_KEY_SET).fill("");
      this.#smallCount[d] = 0;
      const big = this.#bigKeys[d];
      if (big) big.clear();
      if (this.#shapes[d] === undefined) this.#shapes[d] = new KeyShape();
      this.#shapeMode[d] = SHAPE_ON;
    }
    this.depth = d + 1;
    return d;
  }

  #appendCarry(src: Uint8Array, from: number, to: number): void {
    const len = to - from;
    if (len <= 0) return;
    const need = this.#carryLen + len;
    if (need > this.#carry.length) {
      let cap = this.#carry.length * 2;
      while (cap < need) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.#carry.subarray(0, this.#carryLen));
      this.#carry = next;
    }
    this.#carry.set(src.subarray(from, to), this.#carryLen);
    this.#carryLen = need;
  }

  #afterValue(): void {
    const d = this.depth;
    if (d === 0) {
      this.#state = S_DOC_END;
      return;
    }
    const kind = this.kinds[d - 1];
    if (kind === KIND_SEQ) this.#state = this.format === "jsonl" ? S_LINE_END : S_SEQ_END;
    else this.#state = S_AFTER;
  }

  #run(c: Uint8Array): void {
    this.#chunk = c;
    const n = c.length;
    const base = this.#base;
    let i = 0;
    let b = 0;
    outer: while (i < n) {
      switch (this.#state) {
        case S_VALUE:
        case S_ARR_FIRST: {
          b = c[i];
          if (IS_WS[b] === 1) {
            i = this.#skipWs(c, i, n);
            if (i >= n) break outer;
            b = c[i];
          }
          if (this.#state === S_ARR_FIRST && b === CLOSE_BRACKET) {
            i++;
            this.#close(base + i);
            continue;
          }
          if (this.depth === 0 && base + i === 0) {
            if (b === RS) this.#formatMismatch(0, "json-seq");
            if (b === BOM_0) {
              this.#state = S_BOM;
              this.#litIdx = 1;
              i++;
              continue;
            }
          }
          i = this.#beginValue(i, b);
          continue;
        }
        case S_AFTER: {
          b = c[i];
          if (IS_WS[b] === 1) {
            i = this.#skipWs(c, i, n);
            if (i >= n) break outer;
            b = c[i];
          }
          const kind = this.kinds[this.depth - 1];
          if (b === COMMA) {
            i++;
            this.#state = kind === KIND_OBJECT ? S_OBJ_KEY : S_VALUE;
            continue;
          }
          if (b === CLOSE_BRACE && kind === KIND_OBJECT) {
            i++;
            this.#close(base + i);
            continue;
          }
          if (b === CLOSE_BRACKET && kind === KIND_ARRAY) {
            i++;
            this.#close(base + i);
            continue;
          }
          const expected = kind === KIND_OBJECT ? "',' or '}'" : "',' or ']'";
          if (b === SLASH) {
            i = this.#slash(base + i, `Unexpected '/'; expected ${expected}`);
            continue;
          }
          this.#unexpected(b, base + i, expected);
          break;
        }
        case S_OBJ_FIRST:
        case S_OBJ_KEY: {
          b = c[i];
          if (IS_WS[b] === 1) {
            i = this.#skipWs(c, i, n);
            if (i >= n) break outer;
            b = c[i];
          }
          if (b === QUOTE) {
            this.#beginString(base + i, true);
            i++;
            continue;
          }
          if (b === CLOSE_BRACE) {
            if (this.#state === S_OBJ_FIRST) {
              i++;
              this.#close(base + i);
              continue;
            }
            this.#syntax(
              "Trailing comma before '}'",
              base + i,
              "Remove the comma after the last member.",
            );
          }
          if (b === SLASH) {
            i = this.#slash(base + i, "Unexpected '/'; expected a member name in double quotes");
            continue;
          }
          this.#unexpected(b, base + i, "a member name in double quotes");
          break;
        }
        case S_COLON: {
          b = c[i];
          if (IS_WS[b] === 1) {
            i = this.#skipWs(c, i, n);
            if (i >= n) break outer;
            b = c[i];
          }
          if (b === COLON) {
            i++;
            this.#state = S_VALUE;
            continue;
          }
          if (b === SLASH) {
            i = this.#slash(base + i, "Unexpected '/'; expected ':' after the member name");
            continue;
          }
          this.#unexpected(b, base + i, "':' after the member name");
          break;
        }
        case S_STRING: {
          // Perf: the scan loop touches one table entry per byte and nothing else.
          for (;;) {
            while (i < n && STRING_STOP[c[i]] === 0) i++;
            if (i >= n) break outer;
            b = c[i];
            if (b === QUOTE) {
              i++;
              this.#endString(i);
              continue outer;
            }
            if (b === BACKSLASH) {
              this.#strEsc = true;
              i++;
              this.#state = S_STR_ESC;
              continue outer;
            }
            if (b < 0x20) {
              this.#syntax(
                `Unescaped control character U+${b.toString(16).padStart(4, "0").toUpperCase()} in a string`,
                base + i,
                "Control characters must be escaped (\\n, \\t, \\u00XX).",
              );
            }
            // A UTF-8 lead byte.
            this.#strHigh = true;
            if (b < 0xc2) this.#badUtf8(base + i);
            if (b < 0xe0) {
              this.#u8need = 1;
              this.#u8lo = 0x80;
              this.#u8hi = 0xbf;
            } else if (b < 0xf0) {
              this.#u8need = 2;
              this.#u8lo = b === 0xe0 ? 0xa0 : 0x80;
              this.#u8hi = b === 0xed ? 0x9f : 0xbf;
            } else if (b < 0xf5) {
              this.#u8need = 3;
              this.#u8lo = b === 0xf0 ? 0x90 : 0x80;
              this.#u8hi = b === 0xf4 ? 0x8f : 0xbf;
            } else this.#badUtf8(base + i);
            i++;
            while (this.#u8need > 0) {
              if (i >= n) {
                this.#state = S_STR_UTF8;
                break outer;
              }
              b = c[i];
              if (b < this.#u8lo || b > this.#u8hi) this.#badUtf8(base + i);
              this.#u8lo = 0x80;
              this.#u8hi = 0xbf;
              this.#u8need--;
              i++;
            }
          }
        }
        case S_STR_UTF8: {
          b = c[i];
          if (b < this.#u8lo || b > this.#u8hi) this.#badUtf8(base + i);
          this.#u8lo = 0x80;
          this.#u8hi = 0xbf;
          i++;
          if (--this.#u8need === 0) this.#state = S_STRING;
          continue;
        }
        case S_STR_ESC: {
          b = c[i];
          if (b === LOWER_U) {
            this.#state = S_STR_U;
            this.#uCount = 0;
            this.#uVal = 0;
            i++;
            continue;
          }
          if (
            b === QUOTE ||
            b === BACKSLASH ||
            b === SLASH ||
            b === LOWER_B ||
            b === LOWER_F ||
            b === LOWER_N ||
            b === LOWER_R ||
            b === LOWER_T
          ) {
            this.#state = S_STRING;
            i++;
            continue;
          }
          this.#syntax(
            `Invalid escape '\\${printable(b)}' in a string`,
            base + i - 1,
            'Valid escapes: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX.',
          );
          break;
        }
        case S_STR_U: {
          b = c[i];
          const h = HEX_VALUE[b];
          if (h === 255)
            this.#syntax("Invalid \\u escape: four hexadecimal digits expected", base + i);
          this.#uVal = (this.#uVal << 4) | h;
          i++;
          if (++this.#uCount < 4) continue;
          const u = this.#uVal;
          if (this.#wantLow) {
            if (u < 0xdc00 || u > 0xdfff) this.#loneSurrogate(base + i - 6);
            this.#wantLow = false;
            this.#state = S_STRING;
          } else if (u >= 0xd800 && u <= 0xdbff) {
            this.#wantLow = true;
            this.#state = S_STR_LOW_BS;
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            this.#loneSurrogate(base + i - 6);
          } else this.#state = S_STRING;
          continue;
        }
        case S_STR_LOW_BS: {
          if (c[i] !== BACKSLASH) this.#loneSurrogate(base + i - 6);
          i++;
          this.#state = S_STR_LOW_U;
          continue;
        }
        case S_STR_LOW_U: {
          if (c[i] !== LOWER_U) this.#loneSurrogate(base + i - 7);
          i++;
          this.#state = S_STR_U;
          this.#uCount = 0;
          this.#uVal = 0;
          continue;
        }
        case S_NUM_MINUS: {
          b = c[i];
          if (b === DIGIT_0) this.#state = S_NUM_ZERO;
          else if (b >= DIGIT_1 && b <= DIGIT_9) this.#state = S_NUM_INT;
          else this.#syntax("A digit must follow '-'", base + i);
          i++;
          continue;
        }
        case S_NUM_ZERO: {
          b = c[i];
          if (b === DOT) {
            this.#state = S_NUM_DOT;
            i++;
          } else if (b === LOWER_E || b === UPPER_E) {
            this.#state = S_NUM_E;
            i++;
          } else if (b >= DIGIT_0 && b <= DIGIT_9) {
            this.#syntax("Leading zeros are not allowed in numbers", base + i - 1);
          } else this.#endNumber(i);
          continue;
        }
        case S_NUM_INT: {
          while (i < n) {
            b = c[i];
            if (b < DIGIT_0 || b > DIGIT_9) break;
            i++;
          }
          if (i >= n) break outer;
          if (b === DOT) {
            this.#state = S_NUM_DOT;
            i++;
          } else if (b === LOWER_E || b === UPPER_E) {
            this.#state = S_NUM_E;
            i++;
          } else this.#endNumber(i);
          continue;
        }
        case S_NUM_DOT: {
          b = c[i];
          if (b < DIGIT_0 || b > DIGIT_9)
            this.#syntax("A digit must follow the decimal point", base + i);
          this.#state = S_NUM_FRAC;
          i++;
          continue;
        }
        case S_NUM_FRAC: {
          while (i < n) {
            b = c[i];
            if (b < DIGIT_0 || b > DIGIT_9) break;
            i++;
          }
          if (i >= n) break outer;
          if (b === LOWER_E || b === UPPER_E) {
            this.#state = S_NUM_E;
            i++;
          } else this.#endNumber(i);
          continue;
        }
        case S_NUM_E: {
          b = c[i];
          if (b === PLUS || b === MINUS) this.#state = S_NUM_ESIGN;
          else if (b >= DIGIT_0 && b <= DIGIT_9) this.#state = S_NUM_EXP;
          else this.#syntax("A digit or sign must follow the exponent marker", base + i);
          i++;
          continue;
        }
        case S_NUM_ESIGN: {
          b = c[i];
          if (b < DIGIT_0 || b > DIGIT_9)
            this.#syntax("A digit must follow the exponent sign", base + i);
          this.#state = S_NUM_EXP;
          i++;
          continue;
        }
        case S_NUM_EXP: {
          while (i < n) {
            b = c[i];
            if (b < DIGIT_0 || b > DIGIT_9) break;
            i++;
          }
          if (i >= n) break outer;
          this.#endNumber(i);
          continue;
        }
        case S_LIT: {
          const lit = this.#lit;
          while (i < n && this.#litIdx < lit.length) {
            if (c[i] !== lit[this.#litIdx])
              this.#syntax("Invalid literal (expected true, false or null)", this.#tokStart);
            i++;
            this.#litIdx++;
          }
          if (this.#litIdx < lit.length) break outer;
          this.#scalarEndIdx = i;
          this.#scalar(this.#litType, this.#tokStart, base + i);
          continue;
        }
        case S_BOM: {
          b = c[i];
          if ((this.#litIdx === 1 && b !== BOM_1) || (this.#litIdx === 2 && b !== BOM_2)) {
            this.#syntax("Invalid UTF-8 at the start of the file", base + i);
          }
          i++;
          if (++this.#litIdx === 3) {
            this.#state = this.format === "json" ? S_VALUE : S_LINE_START;
            this.#lineStart = base + i;
          }
          continue;
        }
        case S_DOC_END: {
          b = c[i];
          if (IS_WS[b] === 1) {
            const before = this.#line;
            i = this.#skipWs(c, i, n);
            if (this.#line !== before) this.#newlineAfterRoot = true;
            continue;
          }
          if (b === SLASH) {
            i = this.#slash(base + i, "Unexpected '/' after the end of the document");
            continue;
          }
          if (startsValue(b) && this.#newlineAfterRoot) this.#formatMismatch(base + i, "jsonl");
          if (b === RS) this.#formatMismatch(base + i, "json-seq");
          this.#syntax(`Unexpected ${describe(b)} after the end of the document`, base + i);
          break;
        }
        case S_LINE_START:
        case S_LINE_WS: {
          b = c[i];
          if (b === SPACE || b === TAB || b === CR) {
            this.#state = S_LINE_WS;
            i++;
            continue;
          }
          if (b === LF) {
            this.#syntax(
              "Blank line in JSONL",
              base + i,
              "JSONL allows one value per line and no empty lines.",
            );
          }
          if (b === RS && base + i === 0) this.#formatMismatch(0, "json-seq");
          if (b === BOM_0 && base + i === 0) {
            this.#state = S_BOM;
            this.#litIdx = 1;
            i++;
            continue;
          }
          this.#recordStart = this.#lineStart;
          i = this.#beginValue(i, b);
          continue;
        }
        case S_LINE_END: {
          b = c[i];
          if (b === SPACE || b === TAB || b === CR) {
            i++;
            continue;
          }
          if (b === LF) {
            i++;
            this.#line++;
            this.#lineStart = base + i;
            this.#state = S_LINE_START;
            continue;
          }
          if (b === SLASH) {
            i = this.#slash(base + i, "Unexpected '/' after the record's value");
            continue;
          }
          this.#syntax(
            `Unexpected ${describe(b)} after the record's value`,
            base + i,
            "Each JSONL line holds exactly one JSON value.",
          );
          break;
        }
        case S_SEQ_START: {
          b = c[i];
          if (b === RS) {
            i++;
            this.#recordStart = base + i - 1;
            this.#state = S_SEQ_AFTER_RS;
            continue;
          }
          if (base + i === 0)
            this.#formatMismatch(0, startsValue(b) || IS_WS[b] === 1 ? "json" : "");
          this.#syntax(
            `Expected RS (0x1E) before a JSON-seq record, found ${describe(b)}`,
            base + i,
          );
          break;
        }
        case S_SEQ_AFTER_RS: {
          b = c[i];
          if (IS_WS[b] === 1) {
            i = this.#skipWs(c, i, n);
            continue;
          }
          if (b === RS) this.#syntax("Empty JSON-seq record", base + i);
          i = this.#beginValue(i, b);
          continue;
        }
        case S_SEQ_END:
        case S_SEQ_END_LF: {
          b = c[i];
          if (b === LF) {
            this.#state = S_SEQ_END_LF;
            i = this.#skipWs(c, i, n);
            continue;
          }
          if (IS_WS[b] === 1) {
            i = this.#skipWs(c, i, n);
            continue;
          }
          if (b === RS) {
            if (this.#state === S_SEQ_END) {
              this.#syntax("A JSON-seq record must end with LF before the next RS", base + i);
            }
            i++;
            this.#recordStart = base + i - 1;
            this.#state = S_SEQ_AFTER_RS;
            continue;
          }
          if (b === SLASH) {
            i = this.#slash(base + i, "Unexpected '/' after the record's value");
            continue;
          }
          this.#syntax(`Unexpected ${describe(b)} after the record's value`, base + i);
          break;
        }
        case S_SLASH: {
          const pending = this.#pendingSlash!;
          this.#pendingSlash = null;
          throw c[i] === SLASH || c[i] === ASTERISK ? pending.comment : pending.stray;
        }
        default:
          throw new Error(`tokenizer: bad state ${this.#state}`);
      }
    }
    // End of chunk: keep what the current token needs, and check limits that grow with the input.
    const st = this.#state;
    const abs = base + n;
    if (st >= S_STRING && st <= S_STR_UTF8) {
      const len = abs - this.#tokStart;
      if (len > this.limits.maxStringBytes) {
        this.#limit(
          "max_string_bytes",
          this.limits.maxStringBytes,
          len,
          this.#tokStart,
          "A string is too long",
        );
      }
      if (this.#keep) this.#keepTail(c, n);
    } else if (st >= S_NUM_MINUS && st <= S_NUM_EXP) {
      const len = abs - this.#tokStart;
      if (len > this.limits.maxNumberBytes) {
        this.#limit(
          "max_number_bytes",
          this.limits.maxNumberBytes,
          len,
          this.#tokStart,
          "A number is too long",
        );
      }
      this.#keepTail(c, n);
    }
    if (this.format !== "json" && this.depth > 1) this.#checkRecordSize(abs);
    this.#base = abs;
  }

  #keepTail(c: Uint8Array, n: number): void {
    if (this.#carrying) this.#appendCarry(c, 0, n);
    else {
      this.#carryLen = 0;
      this.#appendCarry(c, this.#tokStart - this.#base, n);
      this.#carrying = true;
    }
  }

  #checkRecordSize(abs: number): void {
    const len = abs - this.#recordStart;
    if (len > this.limits.maxRecordBytes) {
      this.#limit(
        "max_record_bytes",
        this.limits.maxRecordBytes,
        len,
        this.#recordStart,
        "A record is too long",
      );
    }
  }

  #skipWs(c: Uint8Array, i: number, n: number): number {
    while (i < n) {
      const b = c[i];
      if (b === SPACE || b === TAB || b === CR) i++;
      else if (b === LF) {
        if (this.format === "jsonl" && this.depth > 1) {
          this.#formatMismatch(this.#base + i, "json");
        }
        i++;
        this.#line++;
        this.#lineStart = this.#base + i;
      } else break;
    }
    return i;
  }

  /** Starts the value whose first byte `b` is at `i`; returns the next index. */
  #beginValue(i: number, b: number): number {
    const d = this.depth;
    const abs = this.#base + i;
    if (d > 0 && this.kinds[d - 1] !== KIND_OBJECT) {
      this.index[d - 1]++;
      this.members[d - 1]++;
    }
    switch (b) {
      case OPEN_BRACE:
        this.#push(KIND_OBJECT, abs);
        if (this.depth <= this.#quiet) this.sink.open(KIND_OBJECT, abs);
        this.#state = S_OBJ_FIRST;
        return i + 1;
      case OPEN_BRACKET:
        this.#push(KIND_ARRAY, abs);
        if (this.depth <= this.#quiet) this.sink.open(KIND_ARRAY, abs);
        this.#state = S_ARR_FIRST;
        return i + 1;
      case QUOTE:
        this.#beginString(abs, false);
        return i + 1;
      case MINUS:
        this.#beginNumber(abs, S_NUM_MINUS);
        return i + 1;
      case DIGIT_0:
        this.#beginNumber(abs, S_NUM_ZERO);
        return i + 1;
      case LOWER_T:
        this.#beginLiteral(abs, LIT_TRUE, T_TRUE);
        return i + 1;
      case LOWER_F:
        this.#beginLiteral(abs, LIT_FALSE, T_FALSE);
        return i + 1;
      case LOWER_N:
        this.#beginLiteral(abs, LIT_NULL, T_NULL);
        return i + 1;
      default:
        if (b >= DIGIT_1 && b <= DIGIT_9) {
          this.#beginNumber(abs, S_NUM_INT);
          return i + 1;
        }
        // Undo the element count so the error path names the container.
        if (d > 0 && this.kinds[d - 1] !== KIND_OBJECT) {
          this.index[d - 1]--;
          this.members[d - 1]--;
        }
        if (b === SLASH) return this.#slash(abs, "Unexpected '/'; expected a JSON value");
        if (b === CLOSE_BRACKET && d > 0 && this.kinds[d - 1] === KIND_ARRAY) {
          this.#syntax(
            "Trailing comma before ']'",
            abs,
            "Remove the comma after the last element.",
          );
        }
        if (b === 0x27)
          this.#syntax(
            "Strings must use double quotes",
            abs,
            "JSON has no single-quoted strings (that is JSON5).",
          );
        if (b === RS && this.format === "jsonl" && abs === 0) this.#formatMismatch(0, "json-seq");
        this.#unexpected(b, abs, "a JSON value");
    }
  }

  #beginString(abs: number, isKey: boolean): void {
    this.#state = S_STRING;
    this.#tokStart = abs;
    this.#strIsKey = isKey;
    this.#strEsc = false;
    this.#strHigh = false;
    this.#wantLow = false;
    this.#carrying = false;
    this.#keep = isKey || this.wantScalarBytes;
  }

  #beginNumber(abs: number, state: number): void {
    this.#state = state;
    this.#tokStart = abs;
    this.#carrying = false;
  }

  #beginLiteral(abs: number, lit: Uint8Array, type: number): void {
    this.#state = S_LIT;
    this.#tokStart = abs;
    this.#lit = lit;
    this.#litIdx = 1;
    this.#litType = type;
  }

  #endString(i: number): void {
    const end = this.#base + i;
    const len = end - this.#tokStart;
    if (len > this.limits.maxStringBytes) {
      this.#limit(
        "max_string_bytes",
        this.limits.maxStringBytes,
        len,
        this.#tokStart,
        "A string is too long",
      );
    }
    this.#scalarEndIdx = i;
    if (this.#strIsKey) {
      this.#endKey();
      return;
    }
    this.#scalar(T_STRING, this.#tokStart, end);
  }

  /** A member name ended: names it, checks it is new in its object, tells the sink. */
  #endKey(): void {
    const d = this.depth - 1;
    const k = this.members[d];
    const shape = this.#shapes[d];
    let name: string;
    this.#tokenBytes();
    if (
      this.#shapeMode[d] === SHAPE_ON &&
      k < shape.count &&
      shape.matches(k, this.#tbBytes, this.#tbStart + 1, this.#tbEnd - 1)
    ) {
      name = shape.names[k];
      this.keys[d] = name;
      this.keyAt[d] = this.#tokStart;
      this.#countMember(d);
    } else {
      if (this.#shapeMode[d] === SHAPE_ON) this.#leaveShape(d, shape, k);
      name = this.#keyString();
      // The name is recorded first so that a duplicate's location names the member itself.
      this.keys[d] = name;
      this.keyAt[d] = this.#tokStart;
      const token = this.#addKey(d, name);
      if (
        this.#shapeMode[d] === SHAPE_FOLLOW &&
        !shape.append(this.#tbBytes, this.#tbStart + 1, this.#tbEnd - 1, name, token)
      )
        this.#shapeMode[d] = SHAPE_OFF;
    }
    this.#state = S_COLON;
    if (this.depth <= this.#quiet) this.sink.key(name, this.#tokStart);
  }

  /**
   * The object at level `d` has a name other than its shape's `k`-th: the shape is cut to the `k`
   * names this object shares with it, and those become the names duplicate detection compares with.
   */
  #leaveShape(d: number, shape: KeyShape, k: number): void {
    shape.count = k;
    this.#shapeMode[d] = SHAPE_FOLLOW;
    const tokens = shape.tokens;
    if (k <= SMALL_KEY_SET) {
      const small = this.#smallKeys[d];
      for (let j = 0; j < k; j++) small[j] = tokens[j];
      this.#smallCount[d] = k;
      return;
    }
    let big = this.#bigKeys[d];
    if (!big) {
      big = new Set<string>();
      this.#bigKeys[d] = big;
    }
    for (let j = 0; j < k; j++) big.add(tokens[j]);
    this.#smallCount[d] = 0;
  }

  #countMember(d: number): void {
    const count = ++this.members[d];
    if (count > this.limits.maxObjectMembers) {
      this.#limit(
        "max_object_members",
        this.limits.maxObjectMembers,
        count,
        this.#tokStart,
        "An object has too many members",
      );
    }
  }

  /** Counts a new member and checks its name against the object's others; returns its token. */
  #addKey(d: number, fullName: string): string {
    const name = nameToken(fullName);
    this.#countMember(d);
    const small = this.#smallKeys[d];
    const used = this.#smallCount[d];
    let big = this.#bigKeys[d];
    if (big && big.size > 0) {
      if (big.has(name)) this.#duplicate(fullName);
      big.add(name);
      return name;
    }
    for (let k = 0; k < used; k++) if (small[k] === name) this.#duplicate(fullName);
    if (used < SMALL_KEY_SET) {
      small[used] = name;
      this.#smallCount[d] = used + 1;
      return name;
    }
    if (!big) {
      big = new Set<string>();
      this.#bigKeys[d] = big;
    }
    for (let k = 0; k < used; k++) big.add(small[k]);
    big.add(name);
    this.#smallCount[d] = 0;
    return name;
  }

  #endNumber(i: number): void {
    const end = this.#base + i;
    const len = end - this.#tokStart;
    if (len > this.limits.maxNumberBytes) {
      this.#limit(
        "max_number_bytes",
        this.limits.maxNumberBytes,
        len,
        this.#tokStart,
        "A number is too long",
      );
    }
    this.#scalarEndIdx = i;
    this.#scalar(T_NUMBER, this.#tokStart, end);
  }

  #scalar(type: number, start: number, end: number): void {
    if (this.depth <= this.#quiet) this.sink.scalar(type, start, end);
    this.#carrying = false;
    this.#carryLen = 0;
    this.#endOfValue(end);
  }

  #close(end: number): void {
    this.depth--;
    // A large object's names are not kept after it ends (the next object at this level reuses a small set).
    const big = this.#bigKeys[this.depth];
    if (big && big.size > BIG_KEY_SET_KEPT) this.#bigKeys[this.depth] = null;
    if (this.depth <= this.#quiet) {
      this.#quiet = NOT_QUIET;
      this.sink.close(end);
    }
    this.#endOfValue(end);
  }

  #endOfValue(end: number): void {
    if (this.depth === 1 && this.format !== "json") this.#checkRecordSize(end);
    this.#afterValue();
  }

  #finish(): void {
    const st = this.#state;
    const abs = this.#base;
    if (st === S_SLASH) throw this.#pendingSlash!.stray;
    if (st === S_NUM_ZERO || st === S_NUM_INT || st === S_NUM_FRAC || st === S_NUM_EXP) {
      this.#scalarEndIdx = this.#chunk.length;
      // The carried prefix already holds the whole number; point the reader at an empty tail.
      this.#chunk = new Uint8Array(0);
      this.#scalarEndIdx = 0;
      this.#scalar(T_NUMBER, this.#tokStart, abs);
      this.#finish();
      return;
    }
    if (st >= S_STRING && st <= S_STR_UTF8) this.#syntax("Unterminated string", this.#tokStart);
    if (st >= S_NUM_MINUS && st <= S_NUM_EXP)
      this.#syntax("Incomplete number at the end of the input", this.#tokStart);
    if (st === S_LIT) this.#syntax("Incomplete literal at the end of the input", this.#tokStart);
    if (st === S_BOM) this.#syntax("Invalid UTF-8 at the start of the file", 0);
    switch (this.format) {
      case "json":
        if (st === S_DOC_END) return;
        if (this.depth === 0) this.#syntax("The document is empty: a JSON value was expected", abs);
        break;
      case "jsonl":
        if (st === S_LINE_START || st === S_LINE_END) {
          this.#closeSeq(abs);
          return;
        }
        if (st === S_LINE_WS)
          this.#syntax("Blank line at the end of the JSONL file", this.#lineStart);
        break;
      case "json-seq":
        if (st === S_SEQ_START || st === S_SEQ_END_LF) {
          this.#closeSeq(abs);
          return;
        }
        if (st === S_SEQ_END) this.#syntax("The last JSON-seq record must end with LF", abs);
        if (st === S_SEQ_AFTER_RS)
          this.#syntax("Empty JSON-seq record at the end of the input", abs);
        break;
    }
    const kind = this.kinds[this.depth - 1];
    this.#syntax(
      `Unexpected end of input inside ${kind === KIND_OBJECT ? "an object" : "an array"}`,
      abs,
      "The input was cut off, or a closing bracket is missing.",
    );
  }

  #closeSeq(abs: number): void {
    this.depth = 0;
    this.sink.close(abs);
  }

  // --- errors ----------------------------------------------------------------------------------

  /** Where `offset` is: line, column (1-based, in bytes), pointer path and record index. */
  location(offset: number): Record<string, unknown> {
    const st = this.#state;
    const inValue =
      st === S_COLON ||
      (st === S_VALUE && this.depth > 0 && this.kinds[this.depth - 1] === KIND_OBJECT) ||
      (st >= S_STRING && st <= S_LIT && !(st <= S_STR_UTF8 && this.#strIsKey));
    const loc: Record<string, unknown> = {
      byte_offset: offset,
      line: this.#line,
      column: Math.max(1, offset - this.#lineStart + 1),
      path: this.pathPointer(inValue),
    };
    if (this.format !== "json" && this.depth > 0 && this.index[0] >= 0)
      loc.record_index = this.index[0];
    return loc;
  }

  /** The pointer of the innermost open container, plus its current child if `includeCurrent`. */
  pathPointer(includeCurrent: boolean): string {
    let out = "";
    const last = includeCurrent ? this.depth : this.depth - 1;
    for (let d = 0; d < last; d++) {
      if (this.kinds[d] === KIND_OBJECT) {
        if (this.members[d] > 0) out += "/" + escapePointerToken(this.keys[d]);
      } else if (this.index[d] >= 0) out += "/" + String(this.index[d]);
    }
    return out;
  }

  #syntax(message: string, offset: number, hint?: string): never {
    const details: Record<string, unknown> = { location: this.location(offset) };
    if (hint) details.hint = hint;
    throw new PagewiseError("SYNTAX_ERROR", message, details);
  }

  #unexpected(b: number, offset: number, expected: string): never {
    let hint: string | undefined;
    if (b >= 0x80) {
      // A non-ASCII byte outside a string: invalid UTF-8 is reported as such.
      hint = "Only whitespace, punctuation and literals may appear outside strings.";
    } else if (b === 0x4e || b === 0x49) hint = "NaN and Infinity are not JSON numbers.";
    else if ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f) {
      hint = "Member names and strings must be in double quotes.";
    }
    this.#syntax(`Unexpected ${describe(b)}; expected ${expected}`, offset, hint);
  }

  /**
   * A '/' at `offset` (in the current chunk) where JSON has none: `//` and `/*` begin a comment
   * (UNSUPPORTED_SYNTAX with a JSONC hint), anything else is a SYNTAX_ERROR. When the '/' is the
   * chunk's last byte, the errors are prepared now (their location depends on the current state)
   * and the next byte picks one; returns the index after the '/'.
   */
  #slash(offset: number, strayMessage: string): number {
    const idx = offset - this.#base;
    const comment = new PagewiseError("UNSUPPORTED_SYNTAX", "Comments are not allowed in JSON", {
      hint: "This looks like JSONC (JSON with comments); remove the comments or convert the file to JSON.",
      location: this.location(offset),
    });
    const stray = new PagewiseError("SYNTAX_ERROR", strayMessage, {
      location: this.location(offset),
    });
    if (idx + 1 < this.#chunk.length) {
      const next = this.#chunk[idx + 1];
      throw next === SLASH || next === ASTERISK ? comment : stray;
    }
    this.#pendingSlash = { comment, stray };
    this.#state = S_SLASH;
    return idx + 1;
  }

  #pendingSlash: { comment: PagewiseError; stray: PagewiseError } | null = null;

  #badUtf8(offset: number): never {
    this.#syntax(
      "Invalid UTF-8 in a string",
      offset,
      "The file must be valid UTF-8 (no overlong forms, no encoded surrogates).",
    );
  }

  #loneSurrogate(offset: number): never {
    this.#syntax(
      "Lone surrogate in a \\u escape",
      offset,
      "A \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF escape.",
    );
  }

  #duplicate(name: string): never {
    const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
    throw new PagewiseError(
      "SYNTAX_ERROR",
      `Duplicate member name ${JSON.stringify(shown)} in an object`,
      {
        hint: "Strict JSON parsing rejects objects whose member names repeat.",
        location: { ...this.location(this.#tokStart), path: this.pathPointer(true) },
      },
    );
  }

  #limit(name: string, limit: number, value: number, offset: number, what: string): never {
    throw new PagewiseError(
      "RESOURCE_LIMIT_EXCEEDED",
      `${what}: ${name} is ${limit}, found ${value}`,
      {
        limit: { name, limit, value },
        location: this.location(offset),
        hint: "Raise the server's limit if this input is expected.",
      },
    );
  }

  #formatMismatch(offset: number, likely: string): never {
    const likelyFormats = likely ? [likely] : [];
    const message =
      likely === "jsonl"
        ? "More than one JSON value: this looks like JSONL (one value per line)"
        : likely === "json-seq"
          ? "The input starts with RS (0x1E): this looks like a JSON text sequence (RFC 7464)"
          : likely === "json"
            ? this.format === "jsonl"
              ? "A JSONL record continues on the next line: this looks like one JSON document"
              : "The input does not start with RS (0x1E): this is not a JSON text sequence"
            : "The input does not match the requested format";
    const details: Record<string, unknown> = {
      likely_formats: likelyFormats,
      location: this.location(offset),
    };
    if (likely) details.retry = { format: likely };
    throw new PagewiseError("FORMAT_MISMATCH", message, details);
  }
}

/**
 * What duplicate detection keeps of a member name: short names as they are, longer ones as
 * "\u0000" + their SHA-256 digest (33 units, so never equal to a kept name). A cryptographic
 * digest, because the input is untrusted: a crafted collision would report a false duplicate.
 */
function nameToken(name: string): string {
  if (name.length <= KEPT_NAME_CHARS) return name;
  return `\u0000${sha256Binary(name)}`;
}

/** SHA-256 of the UTF-8 of `text`, one character per byte. Perf: the one-shot `crypto.hash` (Node ≥ 20.12) is several times faster than `createHash`. */
const sha256Binary: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "binary")
    : (text) => crypto.createHash("sha256").update(text, "utf8").digest("binary");

function startsValue(b: number): boolean {
  return (
    b === OPEN_BRACE ||
    b === OPEN_BRACKET ||
    b === QUOTE ||
    b === MINUS ||
    (b >= DIGIT_0 && b <= DIGIT_9) ||
    b === LOWER_T ||
    b === LOWER_F ||
    b === LOWER_N
  );
}

function printable(b: number): string {
  return b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
}

function describe(b: number): string {
  if (b >= 0x21 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  return `byte 0x${b.toString(16).padStart(2, "0").toUpperCase()}`;
}
