/**
 * @module
 * The one way a source opens a file at one content version: through the caller's roots
 * (confinement checked on the opened descriptor), with a version and a positional byte reader over
 * exactly the bytes that version describes. `read`, `json_read` and the line cursors of `search`
 * all go through here, so the snapshot and race rules are the same by construction:
 *
 * - a file modified in the last RACY_WINDOW (its identity cannot prove its bytes) and at most
 *   SNAPSHOT_MAX_BYTES is read whole, and version and page come from that one read;
 * - otherwise the version is the content hash cached under the file's identity (or the cursor's
 *   identity fingerprint, which skips the hash after a restart), and `confirmUnchanged` checks
 *   after the page was read that the identity did not move meanwhile.
 */
import type { BigIntStats } from "node:fs";
import { type Descriptor, type OpenedFile, openFileConfined } from "../../access/index.js";
import {
  type FileVersion,
  FileVersions,
  identityKey,
  PagewiseError,
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
  /** CONTENT_CHANGED unless the file's identity is still the one the version was taken under. */
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

export function changedWhileReading(): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    "The file changed while this page was being read. Start again without a cursor.",
    { hint: "Call again with the same arguments but no cursor." },
  );
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
    const { bytes, version, stat } = await readVersion(ctx, opened, options.expect);
    if (options.expect) {
      try {
        FileVersions.check(version, options.expect);
      } catch (e) {
        throw options.changed ? options.changed() : e;
      }
    }
    return {
      handle,
      realPath: opened.realPath,
      ref,
      uri: `file://${encodeURI(opened.realPath)}`,
      bytes,
      version,
      stat,
      async confirmUnchanged() {
        const after = await handle.stat();
        if (identityKey(after) !== identityKey(stat)) throw changedWhileReading();
      },
      close: () => handle.close(),
    };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

async function readVersion(
  ctx: SourceContext,
  opened: OpenedFile,
  expect: VersionExpectation | undefined,
): Promise<{ bytes: ByteSource; version: FileVersion; stat: BigIntStats }> {
  const { handle, stat: st } = opened;
  const size = Number(st.size);
  if (FileVersions.isRacy(st) && size <= SNAPSHOT_MAX_BYTES) {
    const whole = await readWhole(handle, size);
    return {
      bytes: memoryByteSource(whole),
      version: FileVersions.versionOfBytes(whole),
      stat: st,
    };
  }
  const { version, stat } = await ctx.versions.versionAndStat(handle, st, expect, ctx.signal);
  return { bytes: fileByteSource(handle, Number(stat.size)), version, stat };
}
