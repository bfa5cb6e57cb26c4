/**
 * @module
 * Every match of a query as a stream of lines, one compact value per line as `jq -c` prints them:
 * what `pagewise json FILE QUERY` writes into a pipe. No page, budget or cursor is handed out, so
 * no content version is taken either: the file is read once, front to back, through one confined
 * descriptor, and the stream ends in CONTENT_CHANGED if the file's identity moved while it was
 * read (the same check a page makes after reading). Values are copied as bytes, whitespace outside
 * strings dropped, never decoded; a value larger than the read window goes out in pieces, so
 * memory stays bounded by the window and the output buffer whatever the value's size.
 */
import path from "node:path";
import { openFileConfined } from "../../access/index.js";
import { fileByteSource, identityKey } from "../../core/index.js";
import {
  compileQuery,
  detectFormat,
  JsonCompactor,
  type JsonFormat,
  type JsonLimits,
  type JsonMatch,
  type QueryLanguage,
  runQueryBatches,
} from "../../json/index.js";
import { JSON_COMPACT_CHUNK_BYTES, JSON_STREAM_BUFFER_BYTES } from "../limits.js";
import type { SourceContext } from "../shared/context.js";
import { changedWhileReading } from "../shared/versioned-file.js";
import type { RequestedFormat } from "./read.js";
import { ValueWindow } from "./window.js";

export interface JsonStreamArgs {
  readonly path: string;
  readonly language: QueryLanguage;
  readonly query: string;
  readonly format?: RequestedFormat;
  readonly limits?: Partial<JsonLimits>;
}

/** Takes each full buffer of lines; the stream waits for it (backpressure). */
export type ChunkSink = (chunk: Uint8Array) => Promise<void>;

const NEWLINE = 0x0a;

/** Lines gathered into buffers of JSON_STREAM_BUFFER_BYTES; a buffer is never reused once sent. */
class LineBuffer {
  #buf = Buffer.allocUnsafe(JSON_STREAM_BUFFER_BYTES);
  #at = 0;
  constructor(readonly sink: ChunkSink) {}

  /** Room for `bytes` more (after sending what is gathered, if need be); false if they never fit. */
  async reserve(bytes: number): Promise<boolean> {
    if (this.#at + bytes <= this.#buf.length) return true;
    await this.flush();
    return bytes <= this.#buf.length;
  }

  /** Appends the compact text of `bytes[start, end)` and a newline (room was reserved). */
  compactLine(bytes: Uint8Array, start: number, end: number): void {
    this.#at = new JsonCompactor().into(bytes, start, end, this.#buf, this.#at);
    this.#buf[this.#at++] = NEWLINE;
  }

  async flush(): Promise<void> {
    if (this.#at === 0) return;
    const full = this.#buf.subarray(0, this.#at);
    this.#buf = Buffer.allocUnsafe(JSON_STREAM_BUFFER_BYTES);
    this.#at = 0;
    await this.sink(full);
  }
}

/** A value too large for the output buffer, compacted and sent piece by piece. */
async function sendLargeValue(window: ValueWindow, m: JsonMatch, lines: LineBuffer) {
  await lines.flush();
  const compactor = new JsonCompactor();
  for (let pos = m.start; pos < m.end; ) {
    const chunk = await window.read(pos, Math.min(JSON_COMPACT_CHUNK_BYTES, m.end - pos));
    if (chunk.length === 0) break;
    const out = new Uint8Array(chunk.length);
    const used = compactor.into(chunk, 0, chunk.length, out, 0);
    await lines.sink(out.subarray(0, used));
    pos += chunk.length;
  }
  await lines.sink(Uint8Array.of(NEWLINE));
}

/** Sends every match's value, one per line; returns how many there were. */
export async function streamJsonValues(
  ctx: SourceContext,
  args: JsonStreamArgs,
  sink: ChunkSink,
): Promise<number> {
  const compiled = compileQuery(args.language, args.query, args.limits);
  const opened = await openFileConfined(ctx.caller.roots, args.path);
  try {
    const window = new ValueWindow(fileByteSource(opened.handle, Number(opened.stat.size)));
    const format: JsonFormat =
      args.format !== undefined && args.format !== "auto"
        ? args.format
        : (await detectFormat(window, path.basename(opened.realPath), args.limits)).detected_format;
    const lines = new LineBuffer(sink);
    let count = 0;
    const batches = runQueryBatches(window, format, compiled, undefined, args.limits, ctx.signal);
    for await (const batch of batches) {
      for (const m of batch) {
        count++;
        const span = m.end - m.start;
        const at = window.offsetOf(m.start, m.end);
        // Perf: a value inside the window the engine just read is copied from it, no read.
        if (at >= 0 && (await lines.reserve(span + 1))) {
          lines.compactLine(window.bytes, at, at + span);
        } else if (span + 1 <= JSON_STREAM_BUFFER_BYTES && (await lines.reserve(span + 1))) {
          lines.compactLine(await window.read(m.start, span), 0, span);
        } else await sendLargeValue(window, m, lines);
      }
    }
    await lines.flush();
    const after = await opened.handle.stat();
    if (identityKey(after) !== identityKey(opened.stat)) throw changedWhileReading();
    return count;
  } finally {
    opened.handle.close().catch(() => undefined);
  }
}
