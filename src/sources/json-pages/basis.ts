/**
 * @module
 * One consistent view of a JSON source for one call: the file opened through the caller's roots,
 * its version and a positional reader over the bytes that version describes — as `read` does it
 * (sources/text/read-text.ts): a recently modified small file is snapshotted whole so that version
 * and page come from one read; otherwise the content hash is cached by file identity, and a cursor's
 * identity fingerprint skips hashing altogether, so a continuation costs O(page), not O(file).
 */
import type { BigIntStats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { openFileConfined } from "../../access/index.js";
import {
  type FileVersion,
  FileVersions,
  identityKey,
  PagewiseError,
  type VersionExpectation,
} from "../../core/index.js";
import { type ByteReader, bufferReader, fileHandleReader } from "../../json/index.js";
import type { SourceContext } from "../context.js";
import type { FileRef } from "../file-ref.js";

/** Recently modified files up to this size are read whole (same bound as `read`). */
const SNAPSHOT_MAX_BYTES = 8 * 1024 * 1024;

export interface JsonBasis {
  readonly handle: FileHandle;
  readonly realPath: string;
  readonly ref: FileRef;
  readonly uri: string;
  readonly reader: ByteReader;
  readonly version: FileVersion;
  readonly stat: BigIntStats;
  /** CONTENT_CHANGED unless the file's identity is still the one the version was taken under. */
  confirmUnchanged(): Promise<void>;
  close(): Promise<void>;
}

export function changedWhileReading(): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    "The file changed while this page was being read. Start again without a cursor.",
    { hint: "Call again with the same arguments but no cursor." },
  );
}

/**
 * Opens `target` (a path argument or a canonical path) and takes its version. With `expect` (from a
 * cursor or a handle), a different version is CONTENT_CHANGED.
 */
export async function openJsonBasis(
  ctx: SourceContext,
  target: string | undefined,
  expect?: VersionExpectation,
  changed?: () => PagewiseError,
): Promise<JsonBasis> {
  const roots = ctx.caller.roots;
  const opened = await openFileConfined(roots, target);
  try {
    const st = await opened.handle.stat({ bigint: true });
    const size = Number(st.size);
    let reader: ByteReader;
    let version: FileVersion;
    let stat = st;
    if (FileVersions.isRacy(st) && size <= SNAPSHOT_MAX_BYTES) {
      const bytes = new Uint8Array(size);
      let done = 0;
      while (done < size) {
        const { bytesRead } = await opened.handle.read(bytes, done, size - done, done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      const snapshot = bytes.subarray(0, done);
      reader = bufferReader(snapshot);
      version = FileVersions.versionOfBytes(snapshot);
    } else {
      version = await ctx.versions.versionOf(opened.handle, st, expect, ctx.signal);
      stat = await opened.handle.stat({ bigint: true });
      reader = fileHandleReader(opened.handle, Number(stat.size));
    }
    if (expect) {
      try {
        FileVersions.check(version, expect);
      } catch (e) {
        throw changed ? changed() : e;
      }
    }
    const handle = opened.handle;
    return {
      handle,
      realPath: opened.realPath,
      ref: {
        rootIndex: opened.rootIndex,
        relPath: roots.relative(opened.rootIndex, opened.realPath),
      },
      uri: `file://${encodeURI(opened.realPath)}`,
      reader,
      version,
      stat,
      async confirmUnchanged() {
        const after = await handle.stat({ bigint: true });
        if (identityKey(after) !== identityKey(stat)) throw changedWhileReading();
      },
      close: () => handle.close(),
    };
  } catch (e) {
    await opened.handle.close();
    throw e;
  }
}
