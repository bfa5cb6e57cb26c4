/**
 * @module
 * Line positions over the positional byte reader (core/io): where a line starts, and newline counts.
 */
import { type ByteSource, STREAM_CHUNK_BYTES } from "../../core/index.js";
import { LINE_INDEX_VERSIONS } from "../limits.js";

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
 * Sparse line positions of one file version: `newlinesBefore[k]` is the number of line
 * terminators before byte `k × STREAM_CHUNK_BYTES`. Learned while scanning for a line, so an
 * `offset` deep into a large file costs O(position) once per version and O(chunk) afterwards.
 */
export interface LineCheckpoints {
  readonly newlinesBefore: number[];
}

/** Checkpoints kept per version (`key`), least recently used first. */
const lineIndexes = new Map<string, readonly number[]>();

/**
 * The checkpoints known for the version `key` (a version string and size), as a copy of the
 * caller's own: what a scan learns into it is kept (`keepLineCheckpoints`) only once the caller
 * has confirmed that the bytes it counted were that version's. Nothing learned from bytes that
 * may have changed outlives the call that read them (a page cut from them is refused anyway).
 */
export function lineCheckpoints(key: string): LineCheckpoints {
  const known = lineIndexes.get(key);
  return { newlinesBefore: known ? [...known] : [0] };
}

/** Keeps the checkpoints a call learned for `key`, once it confirmed the bytes they came from. */
export function keepLineCheckpoints(key: string, learned: LineCheckpoints): void {
  const known = lineIndexes.get(key);
  if (known && known.length >= learned.newlinesBefore.length) {
    // Refresh its LRU position.
    lineIndexes.delete(key);
    lineIndexes.set(key, known);
    return;
  }
  lineIndexes.delete(key);
  lineIndexes.set(key, [...learned.newlinesBefore]);
  if (lineIndexes.size > LINE_INDEX_VERSIONS) {
    const oldest = lineIndexes.keys().next().value;
    if (oldest !== undefined) lineIndexes.delete(oldest);
  }
}

/**
 * Where line `line` (0-based) starts: the file's size (and the number of the line after the last
 * terminator) when it has fewer lines. Scans from the nearest checkpoint below the line (from the
 * start without checkpoints) and records the checkpoints of every chunk it counts whole.
 */
export async function findLineStart(
  source: ByteSource,
  line: number,
  signal?: AbortSignal,
  index: LineCheckpoints = { newlinesBefore: [0] },
): Promise<LineStart> {
  const known = index.newlinesBefore;
  // The last checkpoint with fewer terminators before it than the line's: the line starts after.
  let k = known.length - 1;
  while (k > 0 && known[k]! >= line) k--;
  let remaining = line - known[k]!;
  let position = k * STREAM_CHUNK_BYTES;
  while (remaining > 0 && position < source.size) {
    signal?.throwIfAborted();
    const chunk = await source.read(position, STREAM_CHUNK_BYTES);
    if (chunk.length === 0) break;
    let i = 0;
    const before = remaining;
    // Perf: native indexOf over the chunk instead of a byte loop.
    while (remaining > 0) {
      const nl = chunk.indexOf(NEWLINE, i);
      if (nl < 0) break;
      remaining--;
      i = nl + 1;
    }
    if (remaining > 0 && chunk.length === STREAM_CHUNK_BYTES) {
      // Counted whole: the next chunk's checkpoint is known.
      const next = position / STREAM_CHUNK_BYTES + 1;
      if (known.length === next) known.push(known[next - 1]! + (before - remaining));
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

/** Line ends in `bytes[from, to)` (native search: no decoding, no copy). */
export function countNewlineBytes(bytes: Buffer, from = 0, to = bytes.length): number {
  let n = 0;
  for (let i = bytes.indexOf(NEWLINE, from); i >= 0 && i < to; i = bytes.indexOf(NEWLINE, i + 1))
    n++;
  return n;
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
