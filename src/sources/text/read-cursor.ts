/**
 * @module
 * The `read` cursor payload: which file, which version, where, and where the range ends.
 * Line cursors (`search`, `tail`) and JSON value cursors are read cursors with a byte-range end.
 */
import type { Roots } from "../../access/index.js";
import { ByteWriter, type CursorCodec, malformedCursor } from "../../core/index.js";
import { type FileRef, readVersionedFileRef, writeVersionedFileRef } from "../file-ref.js";

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

export function encodeReadCursor(
  codec: CursorCodec,
  identity: string,
  roots: Roots,
  s: ReadCursorState,
): string {
  const w = new ByteWriter();
  writeVersionedFileRef(w, roots, s);
  w.uint(s.position);
  const encodingBit = s.encoding === "base64" ? 0x80 : 0;
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
  return codec.encode(READ_TOOL, identity, w.finish());
}

export function decodeReadCursor(
  codec: CursorCodec,
  identity: string,
  roots: Roots,
  cursor: string,
): { state: ReadCursorState; absolute: string } {
  const r = codec.decode(READ_TOOL, identity, cursor);
  const { absolute, file: ref, digest, fingerprint } = readVersionedFileRef(r, roots);
  const position = r.uint();
  const tag = r.u8();
  const encoding = tag & 0x80 ? "base64" : "utf-8";
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
  if (tag & ANCHORED_BIT && !anchor) {
    throw malformedCursor();
  }
  r.end();
  return {
    state: {
      file: ref,
      digest,
      fingerprint,
      position,
      encoding,
      end,
      ...(anchor ? { anchor } : {}),
    },
    absolute,
  };
}
