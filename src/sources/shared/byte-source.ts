/**
 * @module
 * Line positions over the positional byte reader (core/io): where a line starts, and newline counts.
 */
import { type ByteSource, STREAM_CHUNK_BYTES } from "../../core/index.js";

export {
  type ByteSource,
  fileByteSource,
  memoryByteSource,
  readWhole,
} from "../../core/index.js";

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
