/**
 * @module
 * The `tail` cursor payload. Layout: file reference, a tag (direction, grep present, grep literal), position,
 * size at issue minus position, append fingerprint (inode 4 + write 4), anchor digest (6),
 * and the grep filter when there is one. About 65 characters for a short path and no filter.
 */
import type { Roots } from "../../access/index.js";
import { ByteWriter, type CursorCodec, malformedCursor } from "../../core/index.js";
import { type FileRef, readFileRef, writeFileRef } from "../file-ref.js";
import { APPEND_FINGERPRINT_BYTES } from "../text/index.js";

export const TAIL_TOOL = "tail";
export const TAIL_ANCHOR_BYTES = 6;

const KIND_AFTER = 0x01;
const HAS_GREP = 0x02;
const GREP_LITERAL = 0x04;

export type TailCursorKind = "before" | "after";

export interface TailCursorState {
  readonly file: FileRef;
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

export function encodeTailCursor(
  codec: CursorCodec,
  identity: string,
  roots: Roots,
  s: TailCursorState,
): string {
  const w = new ByteWriter();
  writeFileRef(w, roots, s.file);
  w.u8(
    (s.kind === "after" ? KIND_AFTER : 0) |
      (s.grep !== undefined ? HAS_GREP : 0) |
      (s.grep !== undefined && s.grepLiteral ? GREP_LITERAL : 0),
  );
  w.uint(s.position).uint(s.size - s.position);
  w.raw(s.fingerprint).raw(s.anchor);
  if (s.grep !== undefined) w.string(s.grep);
  return codec.encode(TAIL_TOOL, identity, w.finish());
}

export function decodeTailCursor(
  codec: CursorCodec,
  identity: string,
  roots: Roots,
  cursor: string,
): { state: TailCursorState; absolute: string } {
  const r = codec.decode(TAIL_TOOL, identity, cursor);
  const { absolute, ref } = readFileRef(r, roots);
  const tag = r.u8();
  if (tag & ~(KIND_AFTER | HAS_GREP | GREP_LITERAL) || (tag & GREP_LITERAL && !(tag & HAS_GREP))) {
    throw malformedCursor();
  }
  const position = r.uint();
  const size = position + r.uint();
  const fingerprint = r.raw(APPEND_FINGERPRINT_BYTES);
  const anchor = r.raw(TAIL_ANCHOR_BYTES);
  const grep = tag & HAS_GREP ? r.string() : undefined;
  r.end();
  return {
    state: {
      file: ref,
      kind: tag & KIND_AFTER ? "after" : "before",
      position,
      size,
      fingerprint,
      anchor,
      ...(grep !== undefined ? { grep } : {}),
      ...(tag & GREP_LITERAL ? { grepLiteral: true } : {}),
    },
    absolute,
  };
}
