/**
 * @module
 * Positional byte readers: the engine reads the source through this interface only, chunk by
 * chunk, never the whole file at once. `ByteSource` of sources/text (file or in-memory snapshot)
 * has the same shape and can be passed as is.
 */

import type { FileHandle } from "node:fs/promises";

export interface ByteReader {
  /** Bytes in the source (the size of the version being read). */
  readonly size: number;
  /** Up to `length` bytes at `position` (fewer only at the end of the source). */
  read(position: number, length: number): Promise<Uint8Array>;
}

/** A reader over an open file, reading with `FileHandle.read(buffer, 0, len, position)`. */
export function fileHandleReader(handle: FileHandle, size: number): ByteReader {
  return {
    size,
    async read(position: number, length: number): Promise<Uint8Array> {
      const len = Math.max(0, Math.min(length, size - position));
      const buffer = new Uint8Array(len);
      let done = 0;
      while (done < len) {
        const { bytesRead } = await handle.read(buffer, done, len - done, position + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === len ? buffer : buffer.subarray(0, done);
    },
  };
}

/** A reader over bytes in memory (tests, small inputs). */
export function bufferReader(bytes: Uint8Array): ByteReader {
  return {
    size: bytes.length,
    async read(position: number, length: number): Promise<Uint8Array> {
      return bytes.subarray(position, Math.min(bytes.length, position + length));
    },
  };
}
