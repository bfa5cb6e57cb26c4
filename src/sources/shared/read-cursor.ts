/**
 * @module
 * The `read` cursor: which file, which version, where, on which line, and where the range ends.
 * Line cursors (`search`, `tail`) and JSON value cursors are read cursors with a byte-range end,
 * issued by those sources through `encodeLineCursor` with the budget of the call that made them.
 */
import {
  type ByteReader,
  type ByteWriter,
  type CursorFormat,
  encodeSourceCursor,
  MAX_TOKENS_PARAM,
  malformedCursor,
} from "../../core/index.js";
import type { SourceContext } from "./context.js";
import { type FileRef, readVersionedFileRef, writeVersionedFileRef } from "./file-ref.js";

export const READ_TOOL = "read";

export type ReadEnd =
  | { readonly kind: "eof" }
  /** Stop after this many more line terminators (`offset`/`limit` ranges). */
  | { readonly kind: "lines"; readonly remaining: number }
  /** Stop at this byte offset, exclusive (one line without its terminator, one JSON value). */
  | { readonly kind: "byte"; readonly offset: number };

export interface ReadCursorState {
  readonly file: FileRef;
  readonly digest: Uint8Array;
  readonly fingerprint: Uint8Array;
  readonly position: number;
  /** 1-based line number at `position`; 0 when not known (a range found from the file's end). */
  readonly line: number;
  readonly encoding: "utf-8" | "base64";
  readonly end: ReadEnd;
  /**
   * Set on range-anchored cursors (line cursors into append-only files, e.g. from `tail`): the
   * version is not the whole file's but `digest` = rangeDigest of `[start, end.offset)`,
   * `fingerprint` = appendFingerprint and `size` the file's size at issue, so appends do not
   * invalidate it (range-anchor.ts). Only with a byte end.
   */
  readonly anchor?: { readonly start: number; readonly size: number };
}

const END_EOF = 0;
const END_LINES = 1;
const END_BYTE = 2;
const ANCHORED_BIT = 0x40;
const BASE64_BIT = 0x80;

function writeReadState(w: ByteWriter, ctx: SourceContext, s: ReadCursorState): void {
  writeVersionedFileRef(w, ctx.caller.roots, s);
  w.uint(s.position).uint(s.line);
  const encodingBit = s.encoding === "base64" ? BASE64_BIT : 0;
  switch (s.end.kind) {
    case "eof":
      w.u8(END_EOF | encodingBit);
      break;
    case "lines":
      w.u8(END_LINES | encodingBit).uint(s.end.remaining);
      break;
    case "byte":
      w.u8(END_BYTE | encodingBit | (s.anchor ? ANCHORED_BIT : 0)).uint(s.end.offset);
      if (s.anchor) w.uint(s.anchor.start).uint(s.anchor.size - s.end.offset);
      break;
  }
}

function readReadState(r: ByteReader, ctx: SourceContext): ReadCursorState & { absolute: string } {
  const { absolute, file, digest, fingerprint } = readVersionedFileRef(r, ctx.caller.roots);
  const position = r.uint();
  const line = r.uint();
  const tag = r.u8();
  const encoding = tag & BASE64_BIT ? "base64" : "utf-8";
  let end: ReadEnd;
  let anchor: { start: number; size: number } | undefined;
  switch (tag & 0x3f) {
    case END_EOF:
      end = { kind: "eof" };
      break;
    case END_LINES:
      end = { kind: "lines", remaining: r.uint() };
      break;
    case END_BYTE:
      end = { kind: "byte", offset: r.uint() };
      if (tag & ANCHORED_BIT) anchor = { start: r.uint(), size: end.offset + r.uint() };
      break;
    default:
      throw malformedCursor();
  }
  if (tag & ANCHORED_BIT && !anchor) throw malformedCursor();
  return {
    file,
    digest,
    fingerprint,
    position,
    line,
    encoding,
    end,
    ...(anchor ? { anchor } : {}),
    absolute,
  };
}

/** The layout of read cursors; `absolute` is the cursor file's path under the caller's roots. */
export const READ_CURSOR: CursorFormat<ReadCursorState & { absolute?: string }, SourceContext> = {
  tool: READ_TOOL,
  params: [MAX_TOKENS_PARAM],
  readState: readReadState,
  writeState: (w, state, ctx) => writeReadState(w, ctx, state),
};

/**
 * Read cursors issued by other sources always spell out their budget: the issuing source does not
 * know the server's default, so "the default" could mean another budget when `read` decodes it.
 */
const LINE_CURSOR: CursorFormat<ReadCursorState & { absolute?: string }, SourceContext> = {
  ...READ_CURSOR,
  params: [{ ...MAX_TOKENS_PARAM, default: 0 }],
};

/**
 * A read cursor issued by another source (a line cursor, a JSON value cursor), carrying the budget
 * of the call that made it so that the cursor alone continues with the same page size.
 */
export function encodeLineCursor(
  ctx: SourceContext,
  maxTokens: number,
  state: ReadCursorState,
): string {
  return encodeSourceCursor(
    LINE_CURSOR,
    { codec: ctx.codec, identity: ctx.caller.identity, context: ctx },
    { max_tokens: maxTokens },
    state,
  );
}
