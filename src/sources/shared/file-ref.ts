/**
 * @module
 * How cursors name a file: a short hash of its root plus the path relative to that root. The root
 * hash (not an index) keeps a cursor from silently pointing into another root when a caller's root
 * list changes; a revoked root makes the cursor's file unreachable (ACCESS_DENIED).
 */
import { createHash } from "node:crypto";
import path from "node:path";
import {
  type OpenedFile,
  openFileConfined,
  type Roots,
  resolveDirectoryConfined,
} from "../../access/index.js";
import {
  type ByteReader,
  type ByteWriter,
  PagewiseError,
  VERSION_DIGEST_BYTES,
} from "../../core/index.js";

const ROOT_HASH_BYTES = 3;

/** Root hashes by directory. Perf: every cursor written or read names its root (a SHA-256 each). */
const rootHashes = new Map<string, Uint8Array>();
/** Roots whose hashes are kept; past it the memo starts again (roots are few and long-lived). */
const ROOT_HASHES_KEPT = 1024;

function rootHash(dir: string): Uint8Array {
  let hash = rootHashes.get(dir);
  if (hash === undefined) {
    if (rootHashes.size >= ROOT_HASHES_KEPT) rootHashes.clear();
    hash = createHash("sha256").update(dir).digest().subarray(0, ROOT_HASH_BYTES);
    rootHashes.set(dir, hash);
  }
  return hash;
}

export interface FileRef {
  readonly rootIndex: number;
  readonly relPath: string;
}

export function writeFileRef(w: ByteWriter, roots: Roots, ref: FileRef): void {
  w.raw(rootHash(roots.dirs[ref.rootIndex]!)).string(ref.relPath);
}

/** Reads a file reference and returns the absolute path it names under the caller's roots. */
export function readFileRef(r: ByteReader, roots: Roots): { absolute: string; ref: FileRef } {
  const hash = r.raw(ROOT_HASH_BYTES);
  const relPath = r.string();
  for (let i = 0; i < roots.dirs.length; i++) {
    if (Buffer.compare(Buffer.from(rootHash(roots.dirs[i]!)), Buffer.from(hash)) === 0) {
      const absolute =
        relPath === "" ? roots.dirs[i]! : path.join(roots.dirs[i]!, ...relPath.split("/"));
      return { absolute, ref: { rootIndex: i, relPath } };
    }
  }
  throw roots.denied("The cursor names a directory this caller may no longer read.");
}

/** INVALID_CURSOR for a cursor passed with a `path` other than the one it was made for. */
export function cursorPathMismatch(): PagewiseError {
  return new PagewiseError(
    "INVALID_CURSOR",
    "This cursor was made for a different path than the one given.",
    {
      hint: "Pass the cursor alone (path may be left out), or start again without a cursor.",
    },
  );
}

/**
 * With a cursor, `path` may be left out; when it is given it must name the cursor's file. Lexical
 * forms may differ (`a/../b.txt`, a symlink inside the root), so they are compared canonically.
 */
export async function checkCursorFilePath(
  roots: Roots,
  pathArg: string | undefined,
  cursorAbsolute: string,
): Promise<void> {
  if (pathArg === undefined || pathArg === "" || roots.resolve(pathArg) === cursorAbsolute) return;
  const given = await openFileConfined(roots, pathArg);
  await given.handle.close();
  const named = await openFileConfined(roots, cursorAbsolute).catch(() => undefined);
  await named?.handle.close();
  if (given.realPath !== named?.realPath) throw cursorPathMismatch();
}

/** The directory form of `checkCursorFilePath`, for `list` and `search`. */
export async function checkCursorDirectoryPath(
  roots: Roots,
  pathArg: string | undefined,
  cursorAbsolute: string,
): Promise<void> {
  if (pathArg === undefined || pathArg === "") return;
  const given = await resolveDirectoryConfined(roots, pathArg);
  const named = await resolveDirectoryConfined(roots, cursorAbsolute).catch(() => undefined);
  if (given.realPath !== named?.realPath) throw cursorPathMismatch();
}

/**
 * The reference of a file just opened; with a cursor's reference, INVALID_CURSOR unless they are
 * the same file (the path may have been re-pointed between the cursor and now).
 */
export function refOfOpened(roots: Roots, opened: OpenedFile, expected?: FileRef): FileRef {
  const ref = {
    rootIndex: opened.rootIndex,
    relPath: roots.relative(opened.rootIndex, opened.realPath),
  };
  if (
    expected &&
    (expected.relPath !== ref.relPath ||
      roots.dirs[expected.rootIndex] !== roots.dirs[ref.rootIndex])
  ) {
    throw cursorPathMismatch();
  }
  return ref;
}

/** A file at one version, as read and json cursors carry it. */
export interface VersionedFileRef {
  readonly file: FileRef;
  /** The version's digest (core/version). */
  readonly digest: Uint8Array;
  /**
   * The version's kind for a whole-file version (empty: state, CONTENT_VERSION_TAG: content); the
   * append fingerprint for a range-anchored read cursor (shared/range-anchor.ts).
   */
  readonly fingerprint: Uint8Array;
}

export function writeVersionedFileRef(w: ByteWriter, roots: Roots, v: VersionedFileRef): void {
  writeFileRef(w, roots, v.file);
  w.raw(v.digest).bytes(v.fingerprint);
}

export function readVersionedFileRef(
  r: ByteReader,
  roots: Roots,
): VersionedFileRef & { absolute: string } {
  const { absolute, ref } = readFileRef(r, roots);
  const digest = r.raw(VERSION_DIGEST_BYTES);
  const fingerprint = r.bytes();
  return { absolute, file: ref, digest, fingerprint };
}
