/**
 * @module
 * What the engine reads from: any positional source of bytes — in practice core's byte reader over
 * an open file at one version, or over bytes in memory. Reads are positional, so a resumed query
 * starts at any offset in O(1).
 */
import { fileByteSource, memoryByteSource, type OpenFile } from "../core/index.js";

export interface ByteReader {
  /** Bytes in the source (the size of the version being read). */
  readonly size: number;
  /** Up to `length` bytes at `position` (fewer only at the end of the source). */
  read(position: number, length: number): Promise<Uint8Array>;
}

/** A reader over an open file (core's positional reader). */
export const fileHandleReader: (handle: OpenFile, size: number) => ByteReader = fileByteSource;

/** A reader over bytes in memory (tests, small inputs). */
export const bufferReader: (bytes: Uint8Array) => ByteReader = memoryByteSource;
