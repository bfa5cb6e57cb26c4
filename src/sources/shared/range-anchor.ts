/**
 * @module
 * Append-tolerant checks for files that only grow (logs, JSONL streams).
 *
 * A whole-file version changes on every append, and computing one costs O(file). Cursors into an
 * append-only file (a `tail` line cursor, a `tail` page cursor) instead bind:
 * - the file's identity: a fingerprint of its inode number and birth time, so a rotated file (a
 *   new file at the same path) is a different file;
 * - a digest of the bytes they depend on (a byte range, or a few bounded anchor windows), checked
 *   with bounded reads; an append never touches those bytes, a truncation or rewrite almost always
 *   does.
 * Only bytes inside the anchors are verified: a rewrite of other bytes is not seen (docs/tail.md).
 */

import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { PagewiseError } from "../../core/index.js";
import type { ByteSource } from "./byte-source.js";

/** Bytes of the inode fingerprint kept in cursors. */
export const INODE_FINGERPRINT_BYTES = 4;
/** Bytes of the write fingerprint kept in cursors. */
export const WRITE_FINGERPRINT_BYTES = 4;
/** Bytes of an append fingerprint: inode fingerprint, then write fingerprint. */
export const APPEND_FINGERPRINT_BYTES = INODE_FINGERPRINT_BYTES + WRITE_FINGERPRINT_BYTES;
/** Ranges up to this many bytes are hashed whole; longer ones by their first and last halves. */
export const RANGE_ANCHOR_FULL_BYTES = 1 << 20;

/** Fingerprint of which file this is (inode number and birth time), stable across appends. */
export function inodeFingerprint(st: BigIntStats): Uint8Array {
  return createHash("sha256")
    .update(`inode:${st.ino}:${st.birthtimeNs}`)
    .digest()
    .subarray(0, INODE_FINGERPRINT_BYTES);
}

/** Fingerprint of the metadata that any write changes (mtime, ctime, size). */
export function writeFingerprint(st: BigIntStats): Uint8Array {
  return createHash("sha256")
    .update(`write:${st.size}:${st.mtimeNs}:${st.ctimeNs}`)
    .digest()
    .subarray(0, WRITE_FINGERPRINT_BYTES);
}

/** Which file, and how it was last written: what a cursor into an append-only file remembers. */
export function appendFingerprint(st: BigIntStats): Uint8Array {
  const out = new Uint8Array(APPEND_FINGERPRINT_BYTES);
  out.set(inodeFingerprint(st), 0);
  out.set(writeFingerprint(st), INODE_FINGERPRINT_BYTES);
  return out;
}

/**
 * Throws CONTENT_CHANGED unless the file `st` describes can be the file a cursor was issued on
 * (`fingerprint` from appendFingerprint, `issuedSize` its size then) changed only by appends: the
 * same inode, not shorter, and not written at all if it did not grow. The caller then checks its
 * anchored bytes.
 */
export function checkAppendOnly(
  st: BigIntStats,
  fingerprint: Uint8Array,
  issuedSize: number,
): void {
  if (fingerprint.length !== APPEND_FINGERPRINT_BYTES) throw fileReplaced();
  if (!sameBytes(inodeFingerprint(st), fingerprint.subarray(0, INODE_FINGERPRINT_BYTES))) {
    throw fileReplaced();
  }
  const size = Number(st.size);
  if (size < issuedSize) throw fileRewritten("was truncated");
  if (
    size === issuedSize &&
    !sameBytes(writeFingerprint(st), fingerprint.subarray(INODE_FINGERPRINT_BYTES))
  ) {
    throw fileRewritten("was modified without growing");
  }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Digest of the bytes `[start, end)`: all of them up to RANGE_ANCHOR_FULL_BYTES, else the first and
 * the last half of that (a range that long is a record too large to re-hash on every page).
 */
export async function rangeDigest(
  source: ByteSource,
  start: number,
  end: number,
  digestBytes: number,
): Promise<Uint8Array> {
  const hash = createHash("sha256").update(`pagewise-range\0${start}\0${end}\0`);
  const length = end - start;
  if (length <= RANGE_ANCHOR_FULL_BYTES) {
    hash.update(await source.read(start, length));
  } else {
    const half = RANGE_ANCHOR_FULL_BYTES / 2;
    hash.update(await source.read(start, half));
    hash.update(await source.read(end - half, half));
  }
  return hash.digest().subarray(0, digestBytes);
}

export function fileReplaced(): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    "The file was replaced (rotated, or deleted and re-created) since this cursor was issued. Start again without a cursor.",
    { hint: "Call again with the same arguments but no cursor." },
  );
}

export function fileRewritten(what: string): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    `The file ${what} since this cursor was issued; only appends keep cursors valid. Start again without a cursor.`,
    { hint: "Call again with the same arguments but no cursor." },
  );
}

/**
 * Whether the file could have changed only by appends between two stats of one open file that
 * were taken around a read of bytes below `neededSize`: same file, not shorter than what was read,
 * and, if it did not grow, not written at all.
 */
export function onlyAppendedBetween(
  before: BigIntStats,
  after: BigIntStats,
  neededSize: number,
): boolean {
  if (after.ino !== before.ino) return false;
  if (after.size < before.size || Number(after.size) < neededSize) return false;
  if (after.size === before.size) {
    return after.mtimeNs === before.mtimeNs && after.ctimeNs === before.ctimeNs;
  }
  return true;
}
