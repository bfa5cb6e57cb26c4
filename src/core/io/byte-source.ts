/**
 * @module
 * The one positional byte reader of pagewise: reads from an open file or from an in-memory
 * snapshot, so a page is always cut from the same bytes its version was computed on. Sources and
 * the JSON engine read through it.
 */
import type { BigIntStats } from "node:fs";

/** An open file as core reads it: positional reads and the descriptor's stat. */
export interface OpenFile {
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  stat(options: { bigint: true }): Promise<BigIntStats>;
}

export interface ByteSource {
  readonly size: number;
  /** Up to `length` bytes at `position` (fewer at the end). */
  read(position: number, length: number): Promise<Buffer>;
}

export function fileByteSource(handle: OpenFile, size: number): ByteSource {
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

export function memoryByteSource(bytes: Uint8Array): ByteSource {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    size: buffer.length,
    async read(position, length) {
      return buffer.subarray(position, Math.min(buffer.length, position + length));
    },
  };
}

/** Reads a whole file into memory (snapshots of small, recently modified files). */
export async function readWhole(handle: OpenFile, size: number): Promise<Buffer> {
  return fileByteSource(handle, size).read(0, size);
}
