/**
 * @module
 * Positional reads from either an open file or an in-memory snapshot, so one page is always cut
 * from the same bytes its version was computed on.
 */
import type { FileHandle } from "node:fs/promises";
import { STREAM_CHUNK_BYTES } from "../../core/index.js";

export interface ByteSource {
  readonly size: number;
  /** Up to `length` bytes at `position` (fewer at the end). */
  read(position: number, length: number): Promise<Buffer>;
}

export function fileByteSource(handle: FileHandle, size: number): ByteSource {
  return {
    size,
    async read(position, length) {
      const want = Math.max(0, Math.min(length, size - position));
      const buffer = Buffer.allocUnsafe(want);
      let filled = 0;
      while (filled < want) {
        const { bytesRead } = await handle.read(buffer, filled, want - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return filled === want ? buffer : buffer.subarray(0, filled);
    },
  };
}

export function memoryByteSource(bytes: Buffer): ByteSource {
  return {
    size: bytes.length,
    async read(position, length) {
      return bytes.subarray(position, Math.min(bytes.length, position + length));
    },
  };
}

/** Reads a whole file into memory (snapshots of small, recently modified files). */
export async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  return fileByteSource(handle, size).read(0, size);
}

const NEWLINE = 0x0a;

/** Where a line starts: its byte offset and its 1-based number. */
export interface LineStart {
  readonly byte: number;
  readonly line: number;
}

/**
 * Where line `line` (0-based) starts, scanning from the start in chunks: the file's size (and the
 * number of the line after the last terminator) when it has fewer lines. Costs O(bytes before
 * that line): line numbers have no index.
 */
export async function findLineStart(
  source: ByteSource,
  line: number,
  signal?: AbortSignal,
): Promise<LineStart> {
  let remaining = line;
  let position = 0;
  while (remaining > 0 && position < source.size) {
    signal?.throwIfAborted();
    const chunk = await source.read(position, STREAM_CHUNK_BYTES);
    if (chunk.length === 0) break;
    let i = 0;
    // Perf: native indexOf over the chunk instead of a byte loop.
    while (remaining > 0) {
      const nl = chunk.indexOf(NEWLINE, i);
      if (nl < 0) break;
      remaining--;
      i = nl + 1;
    }
    position += remaining === 0 ? i : chunk.length;
  }
  return { byte: Math.min(position, source.size), line: line - remaining + 1 };
}

/** Index just after the `count`-th newline in `bytes`, or -1 when there are fewer. */
export function afterNthNewline(bytes: Uint8Array, count: number): number {
  let i = 0;
  let left = count;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (left > 0) {
    const nl = buf.indexOf(NEWLINE, i);
    if (nl < 0) return -1;
    left--;
    i = nl + 1;
  }
  return i;
}

export function countNewlines(text: string): number {
  let n = 0;
  let i = text.indexOf("\n");
  while (i >= 0) {
    n++;
    i = text.indexOf("\n", i + 1);
  }
  return n;
}
