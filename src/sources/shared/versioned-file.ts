/**
 * @module
 * The one way a source opens a file at one version: through the caller's roots (confinement
 * checked on the opened descriptor), with a version and a positional byte reader over exactly the
 * bytes that version describes. `read` (both modes), `json_open`/`json_read` and the line cursors
 * of `search` all go through here, so the rules are the same by construction (core/version and
 * docs/versions.md give the argument):
 *
 * - a file written within its racy window and at most SNAPSHOT_MAX_BYTES is read whole (twice, so
 *   a read torn by a write in progress shows), and gets the content version of those bytes: page
 *   and version come from that one read, without waiting;
 * - any other file gets the state version of a settled state (`FileVersions.settle` waits out what
 *   is left of the racy window of a file written a moment ago); after the page was read,
 *   `confirmUnchanged` checks that the state did not move meanwhile (any write moves it).
 * - A continuation re-checks the kind of version its cursor holds: a state version needs only a
 *   stat (its state was settled when the cursor was issued, so any write since changed it); a
 *   content version is looked up under the file's settled state, or read whole again.
 */
import type { BigIntStats } from "node:fs";
import { type Descriptor, type OpenedFile, openFileConfined } from "../../access/index.js";
import {
  type FileVersion,
  FileVersions,
  isContentExpectation,
  PagewiseError,
  SETTLE_ATTEMPTS,
  sameState,
  stateVersion,
  type VersionExpectation,
} from "../../core/index.js";
import { SNAPSHOT_MAX_BYTES } from "../limits.js";
import { type ByteSource, fileByteSource, memoryByteSource, readWhole } from "./byte-source.js";
import type { SourceContext } from "./context.js";
import { type FileRef, refOfOpened } from "./file-ref.js";

export interface VersionedFile {
  readonly handle: Descriptor;
  /** Canonical path of what was opened. */
  readonly realPath: string;
  readonly ref: FileRef;
  /** `file://` URI of the canonical path. */
  readonly uri: string;
  /** Positional reads of the bytes `version` describes. */
  readonly bytes: ByteSource;
  readonly version: FileVersion;
  /** The stat the version was taken under. */
  readonly stat: BigIntStats;
  /**
   * CONTENT_CHANGED (`changedWhileReading`) unless the bytes read so far are the version's: the
   * file's state did not move since the version was taken (nothing to check for a snapshot).
   */
  confirmUnchanged(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Closes a file without waiting: the page is made, and the close (a thread-pool round trip off a
 * local file system) is nothing the answer needs to wait for (a close that fails leaves nothing to
 * do).
 */
export function closeInBackground(close: () => Promise<void>): void {
  close().catch(() => undefined);
}

const changedWhileReadingErrors = new WeakSet<PagewiseError>();

export function changedWhileReading(): PagewiseError {
  const error = new PagewiseError(
    "CONTENT_CHANGED",
    "The file changed while this page was being read. Start again without a cursor.",
    { hint: "Call again with the same arguments but no cursor." },
  );
  changedWhileReadingErrors.add(error);
  return error;
}

/**
 * Whether `e` says the file changed while a page was read from it: a call without a cursor may
 * then read again from the file's new version (a continuation may not: it is bound to the old).
 */
export function isChangedWhileReading(e: unknown): boolean {
  return e instanceof PagewiseError && changedWhileReadingErrors.has(e);
}

/** How many times a call without a cursor reads again after the file changed under it. */
export const FIRST_READ_ATTEMPTS = 3;

/**
 * Runs `read` (which opens the file and reads from it) again while the file changes under it
 * (`isChangedWhileReading`), up to FIRST_READ_ATTEMPTS times: for calls without a cursor, whose
 * answer may come from whichever version is current, as long as it is one.
 */
export async function readingAgainOnChange<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      if (attempt >= FIRST_READ_ATTEMPTS || !isChangedWhileReading(e)) throw e;
    }
  }
}

export interface VersionedOpen {
  /** From a cursor or a handle: a different version is CONTENT_CHANGED (or `changed()`). */
  readonly expect?: VersionExpectation;
  /** From a cursor: the file it names; another file at that path now is INVALID_CURSOR. */
  readonly expectRef?: FileRef;
  /** The error for a version other than `expect` (default: the generic CONTENT_CHANGED). */
  readonly changed?: () => PagewiseError;
}

/** Opens `target` (a path argument or a canonical path) at its current version. */
export async function openVersionedFile(
  ctx: SourceContext,
  target: string | undefined,
  options: VersionedOpen = {},
): Promise<VersionedFile> {
  const roots = ctx.caller.roots;
  const opened = await openFileConfined(roots, target);
  const handle = opened.handle;
  try {
    const ref = refOfOpened(roots, opened, options.expectRef);
    const basis = await versionBasis(ctx, opened, options.expect);
    if (options.expect) {
      try {
        FileVersions.check(basis.version, options.expect);
      } catch (e) {
        throw options.changed ? options.changed() : e;
      }
    }
    return {
      handle,
      realPath: opened.realPath,
      ref,
      uri: `file://${encodeURI(opened.realPath)}`,
      bytes: basis.bytes,
      version: basis.version,
      stat: basis.stat,
      confirmUnchanged: basis.confirm,
      close: () => handle.close(),
    };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/**
 * The state version of the file open on `handle` (stat `st`) once it is settled, and the state it
 * describes: for a cursor into a file whose bytes were read earlier (a `search` line cursor).
 */
export async function settledStateVersion(
  ctx: SourceContext,
  handle: Descriptor,
  st: BigIntStats,
): Promise<{ version: FileVersion; stat: BigIntStats }> {
  const stat = await ctx.versions.settle(handle, st, {
    localClock: handle.local,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  return { version: stateVersion(stat), stat };
}

/** The bytes a version describes, and how to confirm a read from them. */
interface VersionBasis {
  readonly bytes: ByteSource;
  readonly version: FileVersion;
  readonly stat: BigIntStats;
  readonly confirm: () => Promise<void>;
}

async function versionBasis(
  ctx: SourceContext,
  opened: OpenedFile,
  expect: VersionExpectation | undefined,
): Promise<VersionBasis> {
  const { handle, stat: st } = opened;
  if (expect) {
    if (isContentExpectation(expect)) return contentBasis(ctx, handle, st);
    // The cursor's state was settled when it was issued: any write since moved the state, so the
    // state now is the cursor's version or another one, with no wait.
    return stateBasis(handle, st);
  }
  if (Number(st.size) <= SNAPSHOT_MAX_BYTES && ctx.versions.isRacy(st, handle.local)) {
    return snapshotBasis(ctx, handle, st);
  }
  const { stat } = await settledStateVersion(ctx, handle, st);
  return stateBasis(handle, stat);
}

/** Reads from the file, under the state version of the settled state `st`. */
function stateBasis(handle: Descriptor, st: BigIntStats): VersionBasis {
  return {
    bytes: fileByteSource(handle, Number(st.size)),
    version: stateVersion(st),
    stat: st,
    confirm: () => confirmState(handle, st),
  };
}

async function confirmState(handle: Descriptor, st: BigIntStats): Promise<void> {
  if (!sameState(await handle.stat(), st)) throw changedWhileReading();
}

/** For a cursor holding a content version: the remembered one, or the file read whole again. */
async function contentBasis(
  ctx: SourceContext,
  handle: Descriptor,
  st: BigIntStats,
): Promise<VersionBasis> {
  const remembered = ctx.versions.contentVersionAt(st);
  if (remembered) {
    return {
      bytes: fileByteSource(handle, Number(st.size)),
      version: remembered,
      stat: st,
      confirm: () => confirmState(handle, st),
    };
  }
  // Larger than any snapshot: not the bytes the cursor's version was read from.
  if (Number(st.size) > SNAPSHOT_MAX_BYTES) return stateBasis(handle, st);
  return snapshotBasis(ctx, handle, st);
}

/**
 * The file read whole, with the content version of those bytes. A file within its racy window is
 * read twice: a write in the same clock tick as the last one moves no timestamp, and a read made
 * while such a write is in progress may hold part of it; a second read giving the same bytes shows
 * that none was in progress (a torn read differs from the next one: the write has finished by
 * then, or a later one is elsewhere). A snapshot read under a settled state is remembered for the
 * continuations of its cursors.
 */
async function snapshotBasis(
  ctx: SourceContext,
  handle: Descriptor,
  st: BigIntStats,
): Promise<VersionBasis> {
  for (let attempt = 1; ; attempt++) {
    const settledBefore = !ctx.versions.isRacy(st, handle.local);
    const whole = await readWhole(handle, Number(st.size));
    let after = await handle.stat();
    let torn = false;
    if (sameState(after, st) && !settledBefore) {
      torn = !(await readWhole(handle, Number(st.size))).equals(whole);
      if (!torn) after = await handle.stat();
    }
    if (!torn && sameState(after, st)) {
      const version = FileVersions.versionOfBytes(whole);
      if (settledBefore) ctx.versions.rememberContentVersion(st, version);
      return { bytes: memoryByteSource(whole), version, stat: st, confirm: async () => {} };
    }
    if (attempt >= SETTLE_ATTEMPTS) throw changedWhileReading();
    st = torn ? await handle.stat() : after;
    if (Number(st.size) > SNAPSHOT_MAX_BYTES) {
      return stateBasis(handle, (await settledStateVersion(ctx, handle, st)).stat);
    }
  }
}
