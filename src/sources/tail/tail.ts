/**
 * @module
 * The `tail` source: newest-first, budgeted pages of the records (lines) of a log, JSONL stream or
 * any line file, with cursors that survive appends.
 *
 * A page is found by scanning aligned blocks backward from the end (or from a `before` cursor), or
 * forward from an `after` cursor or the start, collecting candidate records until the budget could
 * not hold more; `pageItems` then fits the exact page. Cost is O(page) wherever the page lies.
 *
 * Cursor checks (see docs/tail.md for what they catch): same inode (not rotated), not shorter than
 * when issued (not truncated), not written at all when it did not grow (same-size rewrite), and the
 * same bytes in two anchor windows: the last 4 KiB before the old size and 1 KiB around the cursor.
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { openFileConfined } from "../../access/index.js";
import {
  completeUtf8Length,
  type PagedItem,
  type PageParam,
  type PageRequest,
  PagewiseError,
  pageItems,
  type Source,
  VERSION_DIGEST_BYTES,
  versionString,
  withFields,
} from "../../core/index.js";
import { GREP_MAX_RECORD_BYTES, TAIL_SCAN_MAX_BYTES, TAIL_SCAN_MAX_MS } from "../limits.js";
import { fileByteSource } from "../shared/byte-source.js";
import type { SourceContext } from "../shared/context.js";
import { checkCursorFilePath, type FileRef, refOfOpened } from "../shared/file-ref.js";
import {
  appendFingerprint,
  checkAppendOnly,
  fileRewritten,
  onlyAppendedBetween,
  rangeDigest,
  sameBytes,
} from "../shared/range-anchor.js";
import { encodeLineCursor } from "../shared/read-cursor.js";
import { closeInBackground } from "../shared/versioned-file.js";
import type { RecordFilter } from "./grep.js";
import { BlockReader, type RecordSpan, recordAt, recordBefore } from "./records.js";
import {
  TAIL_ANCHOR_BYTES,
  TAIL_CURSOR,
  type TailCursorKind,
  type TailCursorState,
} from "./tail-cursor.js";

/** Bytes before the size at issue that a cursor anchors (hashes). */
export const TAIL_END_ANCHOR_BYTES = 4096;
/** Bytes on each side of a cursor's position that it anchors. */
export const TAIL_POSITION_ANCHOR_BYTES = 512;
/** Lower bound of the JSON around one item's text (`{"position":0,"text":""},`), in code units. */
const ITEM_OVERHEAD_UNITS = 24;

/** The arguments of a `tail` call; the budget, limit and clamp travel as page parameters. */
export interface TailArgs {
  readonly path?: string;
  /** `before` or `after` when the call passed its cursor as one of them (`cursor` takes either). */
  readonly cursorKind?: TailCursorKind;
  readonly fromStart?: boolean;
  readonly grep?: string;
  /** `grep` is a plain substring, not a regular expression. */
  readonly grepLiteral?: boolean;
  /** Stall guard of a `grep` only V8 can run (see pattern/guarded-worker.ts). */
  readonly stallMs?: number;
  /** Bytes a filtered scan may cover per page (default TAIL_SCAN_MAX_BYTES; lowered in tests). */
  readonly scanMaxBytes?: number;
}

/** The page parameters of one call, as the page builder uses them. */
interface TailLimits {
  readonly maxTokens: number;
  readonly limit: number;
  readonly maxCharsPerItem: number;
  readonly scanMaxBytes: number;
  readonly loweredFields: string;
}

interface Candidate {
  readonly span: RecordSpan;
  /** The record's text, or its first bytes' text when longer than the clamp could show. */
  readonly text: string;
  readonly base64: boolean;
  /** True when `text` holds only a prefix of the record (the pager will clamp it). */
  readonly prefixOnly: boolean;
}

function invalidArgument(message: string, hint?: string): PagewiseError {
  return new PagewiseError("INVALID_ARGUMENT", message, hint ? { hint } : {});
}

/** The `tail` source; `maxTokens` is the budget parameter with the server's cap. */
export function createTailSource(
  maxTokens: PageParam,
): Source<TailArgs, TailCursorState, SourceContext> {
  return {
    ...TAIL_CURSOR,
    params: [maxTokens, ...TAIL_CURSOR.params.slice(1)],
    conflictWith(args, state) {
      if (args.fromStart) return "from_start";
      if (args.grep !== undefined && args.grep !== (state.grep ?? "")) return "grep";
      if (args.grepLiteral !== undefined && args.grepLiteral !== (state.grepLiteral ?? false))
        return "grep_literal";
      return undefined;
    },
    page: tailPage,
  };
}

async function tailPage(
  request: PageRequest<TailArgs, TailCursorState, SourceContext>,
): Promise<string> {
  const { context: ctx, args, state } = request;
  let target = args.path;
  if (state) {
    if (args.cursorKind !== undefined && state.kind !== args.cursorKind) {
      throw new PagewiseError(
        "INVALID_ARGUMENT",
        state.kind === "before"
          ? "This cursor is an earlier_cursor: pass it as before."
          : "This cursor is a later_cursor: pass it as after.",
      );
    }
    await checkCursorFilePath(ctx.caller.roots, args.path, state.absolute!);
    target = state.absolute;
  } else if (args.path === undefined || args.path === "") {
    throw invalidArgument("Give the path of the file to tail (or a cursor from a previous page).");
  }
  const grep = state
    ? state.grep
    : args.grep !== undefined && args.grep !== ""
      ? args.grep
      : undefined;
  const grepLiteral = state ? state.grepLiteral === true : args.grepLiteral === true;
  // The pattern engines load only for a grep: a plain tail starts sooner (the CLI's start-up).
  const filter =
    grep !== undefined
      ? (await import("./grep.js")).compileGrep(grep, grepLiteral, {
          ...(args.stallMs !== undefined ? { stallMs: args.stallMs } : {}),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
          owner: ctx.caller.identity,
        })
      : undefined;
  const limits: TailLimits = {
    maxTokens: request.params.max_tokens!,
    limit: request.params.limit!,
    maxCharsPerItem: request.params.max_chars_per_item!,
    scanMaxBytes: args.scanMaxBytes ?? TAIL_SCAN_MAX_BYTES,
    loweredFields: request.loweredFields,
  };
  const opened = await openFileConfined(ctx.caller.roots, target);
  try {
    const file = refOfOpened(ctx.caller.roots, opened, state?.file);
    const st = opened.stat;
    const size = Number(st.size);
    const reader = new BlockReader(fileByteSource(opened.handle, size), size);
    if (state) await verifyCursor(reader, st, state);
    const page = await buildPage(ctx, limits, request.cursorAt, {
      reader,
      stat: st,
      file,
      uri: `file://${encodeURI(opened.realPath)}`,
      state,
      forward: state ? state.kind === "after" : args.fromStart === true,
      grep,
      grepLiteral,
      filter,
    });
    const after = await opened.handle.stat();
    if (!onlyAppendedBetween(st, after, size)) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        "The file was truncated, replaced or rewritten while this page was read. Start again without a cursor.",
        { hint: "Call again with the same arguments but no cursor." },
      );
    }
    return page;
  } finally {
    closeInBackground(() => opened.handle.close());
  }
}

/** Digest of the last TAIL_END_ANCHOR_BYTES before `size` (and `size` itself): the page's version. */
async function endDigest(reader: BlockReader, size: number): Promise<Buffer> {
  const bytes = await reader.range(size - TAIL_END_ANCHOR_BYTES, size);
  return createHash("sha256").update(`pagewise-tail\0${size}\0`).update(bytes).digest();
}

/** The bytes a cursor at `position`, issued at `size`, anchors besides the end. */
function positionWindow(reader: BlockReader, size: number, position: number): Promise<Buffer> {
  return reader.range(
    position - TAIL_POSITION_ANCHOR_BYTES,
    Math.min(size, position + TAIL_POSITION_ANCHOR_BYTES),
  );
}

/** The anchor of a cursor at `position`: its end digest and its position window, hashed. */
function anchorOf(end: Uint8Array, position: number, window: Uint8Array): Uint8Array {
  return createHash("sha256")
    .update(end)
    .update(`\0${position}\0`)
    .update(window)
    .digest()
    .subarray(0, TAIL_ANCHOR_BYTES);
}

async function verifyCursor(reader: BlockReader, st: BigIntStats, state: TailCursorState) {
  checkAppendOnly(st, state.fingerprint, state.size);
  const end = await endDigest(reader, state.size);
  const window = await positionWindow(reader, state.size, state.position);
  if (!sameBytes(anchorOf(end, state.position, window), state.anchor)) {
    throw fileRewritten("was rewritten");
  }
}

interface PageInput {
  readonly reader: BlockReader;
  readonly stat: BigIntStats;
  readonly file: FileRef;
  readonly uri: string;
  readonly state: TailCursorState | undefined;
  readonly forward: boolean;
  readonly grep: string | undefined;
  readonly grepLiteral: boolean;
  readonly filter: RecordFilter | undefined;
}

/** What one scan found: candidates in file order, and how far it got. */
interface Scan {
  readonly candidates: Candidate[];
  /** Backward: lowest offset scanned (a record start). Forward: where the next scan resumes. */
  readonly boundary: number;
  /** Forward: the scan saw every record to the end of the file. */
  readonly reachedEnd: boolean;
  /** Backward from the end: where the records still being written begin (the later cursor). */
  readonly newestLater: number;
}

async function buildPage(
  ctx: SourceContext,
  req: TailLimits,
  encodeCursor: (state: TailCursorState) => string,
  input: PageInput,
): Promise<string> {
  const size = input.reader.size;
  // Forward: the first offset; backward: the exclusive end.
  const start = input.state ? input.state.position : input.forward ? 0 : size;
  if (start > size) throw fileRewritten("was truncated");
  const scan = await scanCandidates(ctx, req, input, start);
  const edges = await pageEdges(ctx, req, encodeCursor, input, scan, start);
  return renderTailPage(ctx, req, input, scan, edges, start);
}

/**
 * Scans records from `start` (forward or backward), keeping those that pass the filter, until the
 * page is certainly full: `limit` records, more code units than the budget can hold, or (counted
 * at doubling sizes) more tokens than the budget; a filtered scan also stops after a bounded
 * number of bytes or milliseconds, and its cursors resume there.
 */
async function scanCandidates(
  ctx: SourceContext,
  req: TailLimits,
  input: PageInput,
  start: number,
): Promise<Scan> {
  const { estimator } = ctx;
  const { reader, filter, forward, state } = input;
  const maxChars = req.maxCharsPerItem;
  // Bytes of a record kept for display: enough for `maxChars` code units and then some, so a
  // longer record is seen to be longer (each code unit is at most 3 UTF-8 bytes).
  const keepBytes = maxChars * 3 + 8;
  const budgetUnits = req.maxTokens * estimator.maxUnitsPerToken;
  const candidates: Candidate[] = [];
  let units = 0;
  // The code-unit bound above is loose for estimators whose tokens can cover many units; so the
  // texts collected are also counted at doubling sizes, and the scan stops once they alone exceed
  // the budget. Stopping early can only make a page less full, never overflow it.
  let countAt = 16;
  let enough = false;
  let scanned = 0;
  const began = Date.now();
  const full = () =>
    candidates.length >= req.limit ||
    units > budgetUnits ||
    enough ||
    (filter !== undefined && (scanned > req.scanMaxBytes || Date.now() - began > TAIL_SCAN_MAX_MS));
  const consider = async (span: RecordSpan): Promise<void> => {
    ctx.signal?.throwIfAborted();
    scanned += span.end - span.start;
    const length = span.contentEnd - span.start;
    const want = filter ? Math.max(keepBytes, GREP_MAX_RECORD_BYTES) : keepBytes;
    const bytes = await reader.range(span.start, span.start + Math.min(length, want));
    if (filter && !(await filter(bytes.toString("utf8")))) return;
    const candidate = toCandidate(
      span,
      bytes.subarray(0, Math.min(bytes.length, keepBytes)),
      length,
    );
    candidates.push(candidate);
    units += Math.min(candidate.text.length, maxChars) + ITEM_OVERHEAD_UNITS;
    if (candidates.length >= countAt) {
      countAt *= 2;
      let joined = "";
      for (const c of candidates) joined += `${c.text.slice(0, maxChars)}\n`;
      enough = estimator.count(joined) > req.maxTokens * 1.25;
    }
  };
  let at = start;
  if (forward) {
    let reachedEnd = false;
    while (!full()) {
      const span = await recordAt(reader, at);
      if (!span) {
        reachedEnd = true;
        break;
      }
      await consider(span);
      if (span.partial) {
        reachedEnd = true;
        break;
      }
      at = span.end;
    }
    return { candidates, boundary: at, reachedEnd, newestLater: reader.size };
  }
  // Newest page: where the records that are still being written begin (the later cursor).
  let newestLater = reader.size;
  let first = true;
  while (!full()) {
    const span = await recordBefore(reader, at);
    if (!span) break;
    if (first && !state && span.partial) newestLater = span.start;
    first = false;
    await consider(span);
    at = span.start;
  }
  candidates.reverse();
  return { candidates, boundary: at, reachedEnd: at === 0, newestLater };
}

/** The cursors a page may carry at its edges, and the line cursors of clamped records. */
interface PageEdges {
  readonly version: string;
  /** The cursor of `kind` at `position` (null for `before` at the start of the file). */
  cursorAt(kind: TailCursorKind, position: number): string | null;
  /** Forward: where the next page starts after `end` candidates. */
  laterFor(end: number): number;
  /** Backward: where the page starting at candidate `first` begins. */
  earlierFor(first: number): number;
  /** Backward: the later edge of every page (the cursor's position, or the newest record's). */
  readonly fixedLater: number;
  readonly lineCursors: ReadonlyMap<number, string>;
}

/**
 * Everything the page's rendering needs that takes reads: the anchor windows of every edge a page
 * may end at, and the line cursors of records that may be clamped. Rendering is then synchronous.
 */
async function pageEdges(
  ctx: SourceContext,
  req: TailLimits,
  encodeCursor: (state: TailCursorState) => string,
  input: PageInput,
  scan: Scan,
  start: number,
): Promise<PageEdges> {
  const { reader, stat, file, state, grep, grepLiteral, forward } = input;
  const size = reader.size;
  const { candidates } = scan;
  const fingerprint = appendFingerprint(stat);
  const endSum = await endDigest(reader, size);
  // Perf: the windows are gathered up front (async reads, mostly from cached blocks), but a cursor
  // is hashed and signed only when a probed page needs it — a few per page, not one per candidate.
  const windows = new Map<number, Buffer>();
  const cursors = new Map<string, string | null>();
  const windowAt = async (position: number) => {
    if (!windows.has(position)) windows.set(position, await positionWindow(reader, size, position));
  };
  const n = candidates.length;
  const laterFor = (end: number): number => {
    if (end === n) return scan.boundary;
    const last = candidates[end - 1]!.span;
    return last.partial ? last.start : last.end;
  };
  const earlierFor = (first: number): number =>
    first === 0 ? scan.boundary : candidates[first]!.span.start;
  const fixedLater = state ? start : scan.newestLater;
  if (forward) {
    await windowAt(start);
    // A page holds at least one candidate when there is one.
    for (let end = Math.min(1, n); end <= n; end++) await windowAt(laterFor(end));
  } else {
    await windowAt(fixedLater);
    for (let first = 0; first < Math.max(1, n); first++) await windowAt(earlierFor(first));
  }
  const cursorAt = (kind: TailCursorKind, position: number): string | null => {
    if (kind === "before" && position === 0) return null;
    const key = `${kind}:${position}`;
    let cursor = cursors.get(key);
    if (cursor === undefined) {
      const window = windows.get(position);
      if (window === undefined) throw new Error(`no anchor window at ${position}`);
      cursor = encodeCursor({
        file,
        kind,
        position,
        size,
        fingerprint,
        anchor: anchorOf(endSum, position, window),
        ...(grep !== undefined ? { grep } : {}),
        ...(grepLiteral ? { grepLiteral } : {}),
      });
      cursors.set(key, cursor);
    }
    return cursor;
  };
  return {
    version: versionString(endSum),
    cursorAt,
    laterFor,
    earlierFor,
    fixedLater,
    lineCursors: await lineCursorsOf(ctx, req, input, candidates, fingerprint),
  };
}

/** Read cursors over the records a page may clamp (range-anchored: they survive appends). */
async function lineCursorsOf(
  ctx: SourceContext,
  req: TailLimits,
  input: PageInput,
  candidates: readonly Candidate[],
  fingerprint: Uint8Array,
): Promise<Map<number, string>> {
  const { reader, file, forward } = input;
  const size = reader.size;
  const n = candidates.length;
  const lineCursors = new Map<number, string>();
  for (let i = 0; i < n; i++) {
    const c = candidates[i]!;
    const nearest = forward ? i === 0 : i === n - 1;
    if (!nearest && !c.prefixOnly && c.text.length <= req.maxCharsPerItem) continue;
    const digest = await rangeDigest(
      { size, read: (p: number, l: number) => reader.range(p, p + l) },
      c.span.start,
      c.span.contentEnd,
      VERSION_DIGEST_BYTES,
    );
    lineCursors.set(
      i,
      encodeLineCursor(ctx, req.maxTokens, {
        file,
        digest,
        fingerprint,
        position: c.span.start,
        line: 0,
        encoding: c.base64 ? "base64" : "utf-8",
        end: { kind: "byte", offset: c.span.contentEnd },
        anchor: { start: c.span.start, size },
      }),
    );
  }
  return lineCursors;
}

/** The largest page of the scanned records that fits, with its edges' cursors. */
function renderTailPage(
  ctx: SourceContext,
  req: TailLimits,
  input: PageInput,
  scan: Scan,
  edges: PageEdges,
  start: number,
): string {
  const { uri, state, grep, grepLiteral, forward } = input;
  const size = input.reader.size;
  const { candidates } = scan;
  const n = candidates.length;
  const renderItem = (p: PagedItem<Candidate>): Record<string, unknown> => {
    const c = p.item;
    const item: Record<string, unknown> = { position: c.span.start, text: p.text };
    if (c.base64) item.encoding = "base64";
    if (p.truncated || c.prefixOnly) {
      item.truncated = true;
      const lc = edges.lineCursors.get(p.index);
      if (lc === undefined) throw new Error(`no line cursor for candidate ${p.index}`);
      item.line_cursor = lc;
    }
    if (c.span.partial) item.partial = true;
    return item;
  };
  const page = pageItems<Candidate>({
    total: n,
    at: (i) => candidates[i]!,
    direction: forward ? "forward" : "backward",
    maxTokens: req.maxTokens,
    estimator: ctx.estimator,
    limit: req.limit,
    textOf: (c) => c.text,
    maxUnitsPerItem: req.maxCharsPerItem,
    snap: (text, cut, c) => (c.base64 ? cut - (cut % 4) : codePointCut(text, cut)),
    render: (view) => {
      const earlier = forward ? start : edges.earlierFor(view.start);
      const later = forward ? edges.laterFor(view.end) : edges.fixedLater;
      const hasLater = forward
        ? !(view.end === n && scan.reachedEnd)
        : state !== undefined && later < size;
      const earlierCursor = edges.cursorAt("before", earlier);
      const laterCursor = edges.cursorAt("after", later);
      const body: Record<string, unknown> = {
        uri,
        items: view.items.map(renderItem),
        has_earlier: earlier > 0,
        earlier_cursor: earlierCursor,
        has_later: hasLater,
        later_cursor: laterCursor,
        // The one rule every tool follows: continue with next_cursor until it is null. Here it
        // is the cursor in the direction being paged (back by default, forward after `after`
        // or `from_start`); later_cursor stays for coming back for appended records.
        next_cursor: forward ? (hasLater ? laterCursor : null) : earlierCursor,
        version: edges.version,
      };
      if (grep !== undefined) body.grep = grep;
      if (grepLiteral) body.grep_literal = true;
      return withFields(JSON.stringify(body), req.loweredFields);
    },
  });
  return page.text;
}

function codePointCut(text: string, units: number): number {
  const c = text.charCodeAt(units - 1);
  const d = text.charCodeAt(units);
  return units > 0 && c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? units - 1 : units;
}

/** A record's display text: UTF-8 text when its bytes are valid UTF-8, else base64 of them. */
function toCandidate(span: RecordSpan, kept: Buffer, length: number): Candidate {
  const prefixOnly = kept.length < length;
  let bytes = kept;
  if (prefixOnly) bytes = bytes.subarray(0, completeUtf8Length(bytes, bytes.length));
  if (isUtf8(bytes)) {
    return { span, text: bytes.toString("utf8"), base64: false, prefixOnly };
  }
  const whole = prefixOnly ? kept.subarray(0, kept.length - (kept.length % 3)) : kept;
  return { span, text: whole.toString("base64"), base64: true, prefixOnly };
}
