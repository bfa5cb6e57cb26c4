/**
 * @module
 * The `tail` cursor payload. Layout: file reference, a tag (direction, grep present, grep literal), position,
 * size at issue minus position, append fingerprint (inode 4 + write 4), anchor digest (6),
 * and the grep filter when there is one. About 65 characters for a short path and no filter.
 */
import {
  type ByteReader,
  type ByteWriter,
  type CursorFormat,
  MAX_TOKENS_PARAM,
  malformedCursor,
} from "../../core/index.js";
import { TAIL_DEFAULT_LIMIT, TAIL_DEFAULT_MAX_CHARS_PER_ITEM, TAIL_MAX_LIMIT } from "../limits.js";
import type { SourceContext } from "../shared/context.js";
import { type FileRef, readFileRef, writeFileRef } from "../shared/file-ref.js";
import { APPEND_FINGERPRINT_BYTES } from "../shared/range-anchor.js";

export const TAIL_TOOL = "tail";
export const TAIL_ANCHOR_BYTES = 6;

const KIND_AFTER = 0x01;
const HAS_GREP = 0x02;
const GREP_LITERAL = 0x04;

export type TailCursorKind = "before" | "after";

export interface TailCursorState {
  readonly file: FileRef;
  /** The file's path under the caller's roots (set when decoded). */
  readonly absolute?: string;
  /** `before`: records ending at or before `position`; `after`: records starting at or after it. */
  readonly kind: TailCursorKind;
  readonly position: number;
  /** The file's size when the cursor was issued. */
  readonly size: number;
  /** appendFingerprint of the file at issue (inode, last write). */
  readonly fingerprint: Uint8Array;
  readonly anchor: Uint8Array;
  readonly grep?: string;
  /** The filter is a plain substring (`grep_literal`). */
  readonly grepLiteral?: boolean;
}

function writeTailState(w: ByteWriter, ctx: SourceContext, s: TailCursorState): void {
  writeFileRef(w, ctx.caller.roots, s.file);
  w.u8(
    (s.kind === "after" ? KIND_AFTER : 0) |
      (s.grep !== undefined ? HAS_GREP : 0) |
      (s.grep !== undefined && s.grepLiteral ? GREP_LITERAL : 0),
  );
  w.uint(s.position).uint(s.size - s.position);
  w.raw(s.fingerprint).raw(s.anchor);
  if (s.grep !== undefined) w.string(s.grep);
}

function readTailState(r: ByteReader, ctx: SourceContext): TailCursorState {
  const { absolute, ref } = readFileRef(r, ctx.caller.roots);
  const tag = r.u8();
  if (tag & ~(KIND_AFTER | HAS_GREP | GREP_LITERAL) || (tag & GREP_LITERAL && !(tag & HAS_GREP))) {
    throw malformedCursor();
  }
  const position = r.uint();
  const size = position + r.uint();
  const fingerprint = r.raw(APPEND_FINGERPRINT_BYTES);
  const anchor = r.raw(TAIL_ANCHOR_BYTES);
  const grep = tag & HAS_GREP ? r.string() : undefined;
  return {
    file: ref,
    absolute,
    kind: tag & KIND_AFTER ? "after" : "before",
    position,
    size,
    fingerprint,
    anchor,
    ...(grep !== undefined ? { grep } : {}),
    ...(tag & GREP_LITERAL ? { grepLiteral: true } : {}),
  };
}

/**
 * The layout of tail cursors: the page parameters (budget, records per page, per-record clamp),
 * then the payload above. The tail source supplies the server's budget cap.
 */
export const TAIL_CURSOR: CursorFormat<TailCursorState, SourceContext> = {
  tool: TAIL_TOOL,
  params: [
    MAX_TOKENS_PARAM,
    { name: "limit", default: TAIL_DEFAULT_LIMIT, max: TAIL_MAX_LIMIT },
    {
      name: "max_chars_per_item",
      default: TAIL_DEFAULT_MAX_CHARS_PER_ITEM,
      max: Number.MAX_SAFE_INTEGER,
    },
  ],
  readState: readTailState,
  writeState: (w, state, ctx) => writeTailState(w, ctx, state),
};
