/**
 * @module
 * `json_read`: one page of a query's matches, within a token budget and `max_items`, continued by a
 * self-contained cursor that resumes the engine where the page ended (src/json: O(page) for most
 * queries, see its README).
 *
 * Page text: `{"file_id"?,"language","query","items":[…],"complete","next_cursor","stats"}`. Each
 * item is `{"path":POINTER,"value":RAW}` where RAW is the match's source text with insignificant
 * whitespace dropped (`compactJsonText`), embedded as JSON — never parsed and re-serialized, so
 * numbers and escapes keep their spelling. A value that cannot fit on a page on its own comes back
 * as `{"path","value_truncated":true,"value_bytes","value_cursor"}`: `value_cursor` is a `read`
 * cursor over exactly the value's source bytes. Pages are measured whole with the server's estimator.
 *
 * `stats.skipped` counts the matches the engine re-derived and dropped to resume this page (the
 * resume state's skip count): 0 when the cursor resumed exactly after the previous page's last match,
 * more for queries whose resume point lags behind (see docs/json.md).
 */
import path from "node:path";
import type { Roots } from "../../access/index.js";
import {
  budgetTooSmall,
  type Estimator,
  fitItemCount,
  ItemPageCount,
  type ItemPageLayout,
  itemPageText,
  itemShare,
  type PageParam,
  type PageRequest,
  PagewiseError,
  type Source,
  WHOLE_REST_ITEMS,
} from "../../core/index.js";
import {
  compactJsonRange,
  compileQuery,
  detectFormat,
  type JsonFormat,
  type JsonLimits,
  type JsonMatch,
  type QueryLanguage,
  type ResumeState,
  runQueryBatches,
} from "../../json/index.js";
import type { ByteReader } from "../../json/reader.js";
import { JSON_COMPACT_CHUNK_BYTES } from "../limits.js";
import { checkCarriedLength } from "../shared/carried-argument.js";
import type { SourceContext } from "../shared/context.js";
import { checkCursorFilePath } from "../shared/file-ref.js";
import { encodeLineCursor } from "../shared/read-cursor.js";
import {
  closeInBackground,
  openVersionedFile,
  type VersionedFile,
} from "../shared/versioned-file.js";
import { type Continuation, MatchFeed, SignalRelay, type WalkPosition } from "./continuations.js";
import { JSON_CURSOR, type JsonCursorState } from "./cursor.js";
import type { JsonHandle, JsonHandles } from "./handles.js";
import { ValueWindow } from "./window.js";

export type RequestedFormat = "auto" | JsonFormat;

/** The arguments of a `json_read` call; the budget and max_items travel as page parameters. */
export interface JsonReadArgs {
  readonly fileId?: string;
  readonly path?: string;
  readonly language?: QueryLanguage;
  readonly query?: string;
  readonly format?: RequestedFormat;
}

/** What every json_read call of one server shares: its engine limits and its handles. */
export interface JsonReadOptions {
  readonly maxTokens: PageParam;
  readonly limits?: Partial<JsonLimits>;
  readonly handles: JsonHandles;
}

/** Between two items of a page. */
const ITEM_SEPARATOR = ",";
/** What a page's tail counted alone may count over the same tail on the page. */
const TAIL_MARGIN_TOKENS = 4;
/** Tokens per UTF-16 unit that an item's text is assumed not to exceed (see itemWithValue). */
const ITEM_TOKENS_PER_UNIT_BOUND = 4;

interface Item {
  readonly match: JsonMatch;
  readonly json: string;
  /** Its own count; -1 when it was not taken (the page's running count covers the item). */
  readonly tokens: number;
  readonly truncated: boolean;
}

function invalidArgument(message: string, retry?: Record<string, unknown>): PagewiseError {
  return new PagewiseError("INVALID_ARGUMENT", message, {
    hint: "json_read takes exactly one of: {cursor}; {file_id, language, query}; {path, language, query, format?}.",
    ...(retry ? { retry } : {}),
  });
}

function changedSinceOpen(): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    "The file changed since json_open returned this file_id. Open it again (or pass path) to query the current content.",
    { hint: "Call json_open again, or json_read with path instead of file_id." },
  );
}

/** The `json_read` source over the streaming engine (src/json). */
export function createJsonReadSource(
  options: JsonReadOptions,
): Source<JsonReadArgs, JsonCursorState, SourceContext> {
  return {
    ...JSON_CURSOR,
    params: [options.maxTokens, JSON_CURSOR.params[1]!],
    conflictWith(args, state) {
      if (args.fileId !== undefined) return "file_id";
      if (args.language !== undefined && args.language !== state.language) return "language";
      if (args.query !== undefined && args.query !== state.query) return "query";
      if (args.format !== undefined && args.format !== "auto" && args.format !== state.format)
        return "format";
      return undefined;
    },
    page: (request) => jsonReadPage(request, options),
  };
}

/** The file a call reads, and the handle it came through. */
async function openTarget(
  ctx: SourceContext,
  args: JsonReadArgs,
  state: JsonCursorState | undefined,
  handles: JsonHandles,
): Promise<{ basis: VersionedFile; handle?: JsonHandle }> {
  if (state) {
    await checkCursorFilePath(ctx.caller.roots, args.path, state.absolute!);
    const basis = await openVersionedFile(ctx, state.absolute, {
      expect: state,
      expectRef: state.file,
    });
    return { basis };
  }
  if ((args.fileId === undefined) === (args.path === undefined)) {
    throw invalidArgument(
      args.fileId === undefined
        ? "Give the file to query: path (or a file_id from json_open), or a cursor."
        : "Give either file_id or path, not both.",
    );
  }
  if (args.language === undefined || args.query === undefined) {
    throw invalidArgument(
      'Give both language ("jsonpath" or "pointer") and query.',
      args.language === undefined ? { language: "jsonpath" } : undefined,
    );
  }
  checkCarriedLength(args.query, "query", "max_query_bytes");
  if (args.fileId === undefined) return { basis: await openVersionedFile(ctx, args.path) };
  const handle = handles.get(args.fileId, ctx.caller.identity);
  if (args.format !== undefined && args.format !== "auto" && args.format !== handle.format) {
    throw invalidArgument(
      `This file_id was opened as ${handle.format}; a handle's format never changes. Leave out format, or call json_open with the format you want.`,
      { format: undefined },
    );
  }
  const basis = await openVersionedFile(ctx, handle.realPath, {
    expect: handle,
    changed: changedSinceOpen,
  });
  return { basis, handle };
}

/** Where a cursor resumes a walk, as continuations.ts names it. */
function positionOfCursor(ctx: SourceContext, state: JsonCursorState): WalkPosition {
  return { ...state, identity: ctx.caller.identity };
}

/** A fresh engine over `basis`, at the plan's resume state. */
function startEngine(
  roots: Roots,
  basis: VersionedFile,
  plan: PagePlan,
  options: JsonReadOptions,
): Continuation {
  // Matches arrive in document order, close together: value reads are served from a window.
  const window = new ValueWindow(basis.bytes);
  const relay = new SignalRelay();
  const compiled = compileQuery(plan.language, plan.query, options.limits);
  const batches = runQueryBatches(
    window,
    plan.format,
    compiled,
    plan.resume,
    options.limits,
    relay.signal,
  );
  return { roots, basis, window, feed: new MatchFeed(batches), relay };
}

async function jsonReadPage(
  request: PageRequest<JsonReadArgs, JsonCursorState, SourceContext>,
  options: JsonReadOptions,
): Promise<string> {
  const { context: ctx, args, state } = request;
  const continuations = options.handles.continuations;
  // Perf: the engine the previous page stopped exactly here, if it was kept (continuations.ts).
  const kept = state
    ? await continuations.take(positionOfCursor(ctx, state), ctx.caller.roots)
    : undefined;
  if (kept && state) await checkCursorFilePath(ctx.caller.roots, args.path, state.absolute!);
  const { basis, handle } = kept
    ? { basis: kept.basis, handle: undefined }
    : await openTarget(ctx, args, state, options.handles);
  let engine: Continuation | undefined = kept;
  let keptAgain = false;
  try {
    let format: JsonFormat;
    if (state) format = state.format;
    else if (handle) format = handle.format;
    else if (args.format !== undefined && args.format !== "auto") format = args.format;
    else
      format = (await detectFormat(basis.bytes, path.basename(basis.realPath), options.limits))
        .detected_format;
    const plan: PagePlan = {
      format,
      language: state?.language ?? (args.language as QueryLanguage),
      query: state?.query ?? (args.query as string),
      maxItems: request.params.max_items!,
      resume: state?.resume,
      fileId: handle?.fileId,
    };
    engine ??= startEngine(ctx.caller.roots, basis, plan, options);
    engine.relay.follow(ctx.signal);
    const page = await buildPage(request, basis, plan, engine);
    await basis.confirmUnchanged();
    if (page.next !== undefined) {
      const { identity } = ctx.caller;
      const position = { ...plan, identity, file: basis.ref, digest: basis.version.digest };
      continuations.keep({ ...position, resume: page.next }, engine);
      keptAgain = true;
    }
    return page.text;
  } finally {
    engine?.relay.follow(undefined);
    if (!keptAgain) {
      void (engine?.feed.close() ?? Promise.resolve()).finally(() =>
        closeInBackground(basis.close),
      );
    }
  }
}

interface PagePlan {
  readonly format: JsonFormat;
  readonly language: QueryLanguage;
  readonly query: string;
  readonly maxItems: number;
  readonly resume: ResumeState | undefined;
  readonly fileId: string | undefined;
}

/** The fixed pieces of one page's text and the cursors it hands out. */
interface PageFrame {
  /** `{"file_id"?,"language","query","items":[`. */
  readonly head: string;
  /** Matches the engine re-derived and dropped to resume this page. */
  readonly skipped: number;
  /** The lowered-parameter fields, written last. */
  readonly extras: string;
  /** The json cursor that resumes the query at `resume`. */
  cursorFor(resume: ResumeState): string;
  /** A `read` cursor over exactly a match's source bytes. */
  valueCursor(match: JsonMatch): string;
}

/** What building one page's items needs; `overhead` is learnt at the first item. */
interface ItemBuilder {
  readonly reader: ValueWindow;
  readonly estimator: Estimator;
  readonly frame: PageFrame;
  readonly maxTokens: number;
  /**
   * A value whose compact text is longer than this many bytes cannot fit in any page (a UTF-16
   * unit takes at most 3 bytes, a token covers at most maxUnitsPerToken units).
   */
  readonly capBytes: number;
  readonly signal: AbortSignal | undefined;
  /**
   * With an estimator that keeps a running count: the page's head and items, counted as they are
   * collected, which the page's fit then reuses (items are not counted one by one).
   */
  readonly pageCount: ItemPageCount | undefined;
  /** Tokens of a one-item page without its item; -1 until the first item is made. */
  overhead: number;
  /** Tokens of a page's tail (after its last item), counted alone; -1 until the first item. */
  tailTokens: number;
}

/** The items read for one page: one more than fits tells whether there are more. */
interface Collected {
  readonly items: Item[];
  /** The query has no matches after the last item. */
  readonly exhausted: boolean;
  /** What stopped the engine early, if anything (thrown only when the page is not full). */
  readonly failure: unknown;
}

/**
 * A page's text, and where the engine stands after it: `next` is the resume state of the page's
 * next cursor when the engine was left exactly there (it can continue the walk), else undefined.
 */
interface BuiltPage {
  readonly text: string;
  readonly next: ResumeState | undefined;
}

async function buildPage(
  request: PageRequest<JsonReadArgs, JsonCursorState, SourceContext>,
  basis: VersionedFile,
  plan: PagePlan,
  engine: Continuation,
): Promise<BuiltPage> {
  const ctx = request.context;
  const { estimator } = ctx;
  const reader = engine.window;
  const maxTokens = request.params.max_tokens!;
  const frame = pageFrame(request, basis, plan);
  const builder: ItemBuilder = {
    reader,
    estimator,
    frame,
    maxTokens,
    capBytes: maxTokens * estimator.maxUnitsPerToken * 3,
    signal: ctx.signal,
    pageCount: estimator.running
      ? new ItemPageCount(estimator.running, frame.head, ITEM_SEPARATOR)
      : undefined,
    overhead: -1,
    tailTokens: -1,
  };
  const collected = await collectItems(builder, engine.feed, plan.maxItems);
  const { items, failure } = collected;
  const layout = pageLayout(builder.frame, plan, collected);
  const render = (count: number) => itemPageText(layout, count);

  const available = Math.min(items.length, plan.maxItems);
  // Perf: the page is counted in one pass over its items (a running count, taken as they were
  // collected); else each item's own count, taken when it was made, predicts the cut.
  const itemCost = (i: number) => itemShare(items[i]!.tokens);
  let fitted = fitItemCount(
    available,
    maxTokens,
    estimator,
    render,
    itemCost,
    layout,
    builder.pageCount,
  );
  const first = items[0];
  if (fitted.amount === 0 && available > 0 && !items[0]!.truncated) {
    items[0] = truncatedItem(builder, items[0]!.match);
    fitted = fitItemCount(available, maxTokens, estimator, render, itemCost, layout);
  }
  if (fitted.amount === 0 && available > 0) {
    throw await oneMatchRefusal(builder, collected, first!, available, render);
  }
  if (failure !== undefined) {
    // An error never carries partial content: the page stands only if it was full before the
    // problem (the next page then reaches it).
    if (!(fitted.amount < items.length || items.length >= plan.maxItems)) throw failure;
  }
  if (available === 0) {
    if (plan.language === "pointer" && plan.resume === undefined) {
      throw new PagewiseError(
        "NOT_FOUND",
        `Nothing in ${basis.uri} is at the pointer ${JSON.stringify(plan.query)}.`,
        {
          hint: 'Check the pointer (RFC 6901: "/name/0", "~1" for "/" and "~0" for "~" in names); JSONL and JSON-seq records are "/0", "/1", …',
        },
      );
    }
    if (fitted.tokens > maxTokens) throw budgetTooSmall(maxTokens, fitted.tokens, "an empty page");
  }
  // The engine goes on from right after the last item returned: what was read past it comes first.
  engine.feed.handBack(items.slice(fitted.amount).map((item) => item.match));
  const more = fitted.amount < items.length || !collected.exhausted;
  const next =
    failure === undefined && more && fitted.amount > 0
      ? items[fitted.amount - 1]!.match.resume
      : undefined;
  return { text: fitted.text, next };
}

function pageFrame(
  request: PageRequest<JsonReadArgs, JsonCursorState, SourceContext>,
  basis: VersionedFile,
  plan: PagePlan,
): PageFrame {
  const { version } = basis;
  const maxTokens = request.params.max_tokens!;
  const cursors = new Map<ResumeState, string>();
  return {
    head:
      "{" +
      (plan.fileId !== undefined ? `"file_id":${JSON.stringify(plan.fileId)},` : "") +
      `"language":${JSON.stringify(plan.language)},"query":${JSON.stringify(plan.query)},"items":[`,
    skipped: plan.resume?.skip ?? 0,
    extras: request.loweredFields,
    // Perf: the cursor after the first item is made to learn the tail's size and again for a
    // one-item page; a cursor is a MAC and a SHA-256, so each is made once.
    cursorFor: (resume) => {
      let cursor = cursors.get(resume);
      if (cursor === undefined) {
        cursor = request.cursorAt({
          file: basis.ref,
          digest: version.digest,
          fingerprint: version.fingerprint,
          format: plan.format,
          language: plan.language,
          query: plan.query,
          resume,
        });
        cursors.set(resume, cursor);
      }
      return cursor;
    },
    valueCursor: (m) =>
      encodeLineCursor(request.context, maxTokens, {
        file: basis.ref,
        digest: version.digest,
        fingerprint: version.fingerprint,
        position: m.start,
        line: 0,
        encoding: "utf-8",
        end: { kind: "byte", offset: m.end },
      }),
  };
}

/**
 * Reads matches until one more than `maxItems` (no empty last page) or past the budget. An engine
 * error ends the reading and is kept, not thrown: a page that was already full still stands.
 */
async function collectItems(
  builder: ItemBuilder,
  feed: MatchFeed,
  maxItems: number,
): Promise<Collected> {
  const items: Item[] = [];
  let exhausted = false;
  let failure: unknown;
  let sum = 0;
  const { pageCount } = builder;
  // Tokens of the page so far with a tail; the tail counted alone may count a little more than on
  // the page, so it is trusted short of TAIL_MARGIN_TOKENS (one item more is read, not one less).
  const pageTokens = () =>
    pageCount
      ? pageCount.tokens() + Math.max(builder.tailTokens - TAIL_MARGIN_TOKENS, 0)
      : sum + Math.max(builder.overhead, 0);
  // One match beyond max_items tells whether there are more (no empty last page).
  const full = () =>
    items.length > maxItems || (items.length > 0 && pageTokens() > builder.maxTokens);
  try {
    while (!full()) {
      const batch = await feed.next();
      if (batch === null) {
        exhausted = true;
        break;
      }
      for (let k = 0; k < batch.length; k++) {
        if (full()) {
          feed.handBack(batch.slice(k)); // the next page's, if the engine is kept
          break;
        }
        const m = batch[k]!;
        // Perf: a value inside the window the engine just read is made without awaiting.
        const item = itemFromWindow(builder, m) ?? (await makeItem(builder, m));
        items.push(item);
        if (pageCount) pageCount.add(item.json);
        else sum += itemShare(item.tokens);
      }
    }
  } catch (e) {
    failure = e;
  }
  return { items, exhausted, failure };
}

/**
 * The refusal of a page that holds not even one match. Its cheapest page holds the first match
 * whole or truncated, whichever costs less (a short value costs less than a value cursor), or every
 * match when they are few and the last. A small budget collects with a small cap, so its first
 * match may have been truncated although whole it costs less: it is measured whole too, as a
 * budget of the truncated page's would make it.
 */
async function oneMatchRefusal(
  builder: ItemBuilder,
  collected: Collected,
  first: Item,
  available: number,
  render: (count: number) => string,
): Promise<PagewiseError> {
  const { estimator, maxTokens } = builder;
  const items = collected.items;
  const withFirst = (item: Item) => {
    const kept = items[0]!;
    items[0] = item;
    try {
      return estimator.count(render(1));
    } finally {
      items[0] = kept;
    }
  };
  const truncatedCost = withFirst(items[0]!);
  const whole = first.truncated
    ? await makeItem(
        {
          ...builder,
          maxTokens: truncatedCost,
          capBytes: truncatedCost * estimator.maxUnitsPerToken * 3,
        },
        first.match,
      )
    : first;
  const cheapest = () =>
    Math.min(
      withFirst(whole),
      withFirst(items[0]!),
      collected.exhausted && available <= WHOLE_REST_ITEMS
        ? estimator.count(render(available))
        : Number.POSITIVE_INFINITY,
    );
  return budgetTooSmall(maxTokens, cheapest(), "one match", cheapest);
}

/** The page's layout (head, items, tail); each continuation cursor is made once. */
function pageLayout(frame: PageFrame, plan: PagePlan, collected: Collected): ItemPageLayout {
  const { items, exhausted, failure } = collected;
  const cursors = new Map<number, string>();
  const cursorAfter = (count: number): string => {
    let c = cursors.get(count);
    if (c === undefined) {
      const resume =
        count > 0
          ? items[count - 1]!.match.resume
          : (plan.resume ?? { offset: 0, path: [], skip: 0 });
      c = frame.cursorFor(resume);
      cursors.set(count, c);
    }
    return c;
  };
  return {
    head: frame.head,
    item: (i) => items[i]!.json,
    separator: ITEM_SEPARATOR,
    tail: (count) => {
      const more = count < items.length || !exhausted || failure !== undefined;
      return pageTail(frame, count, more ? cursorAfter(count) : undefined);
    },
  };
}

/** What follows a page's last item: `next_cursor` is `cursor`, or null with the query complete. */
function pageTail(frame: PageFrame, returned: number, cursor: string | undefined): string {
  const next = cursor === undefined ? "null" : JSON.stringify(cursor);
  return `],"complete":${cursor === undefined},"next_cursor":${next},"stats":{"returned":${returned},"skipped":${frame.skipped}}${frame.extras}}`;
}

/** A match whose value cannot fit: its size and a `read` cursor over its source text. */
function truncatedItem(builder: ItemBuilder, m: JsonMatch): Item {
  const json = `{"path":${JSON.stringify(m.pointer)},"value_truncated":true,"value_bytes":${m.end - m.start},"value_cursor":${JSON.stringify(builder.frame.valueCursor(m))}}`;
  return { match: m, json, tokens: builder.estimator.count(json), truncated: true };
}

/** A match with its compact value, or truncated when the value cannot fit a page of its own. */
async function makeItem(builder: ItemBuilder, m: JsonMatch): Promise<Item> {
  const text = await compactValue(builder.reader, m.start, m.end, builder.capBytes, builder.signal);
  return text === null ? truncatedItem(builder, m) : itemWithValue(builder, m, text);
}

/** {@link makeItem} when the value fits a page and lies in the window already read; else undefined. */
function itemFromWindow(builder: ItemBuilder, m: JsonMatch): Item | undefined {
  const window = builder.reader;
  if (m.end - m.start > builder.capBytes) return undefined;
  const at = window.offsetOf(m.start, m.end);
  if (at < 0) return undefined;
  return itemWithValue(builder, m, compactJsonRange(window.bytes, at, at + (m.end - m.start)));
}

function itemWithValue(builder: ItemBuilder, m: JsonMatch, text: string): Item {
  const { estimator, frame } = builder;
  const json = `{"path":${JSON.stringify(m.pointer)},"value":${text}}`;
  if (builder.overhead < 0) {
    const tail = pageTail(frame, 1, frame.cursorFor(m.resume));
    builder.overhead = estimator.count(`${frame.head}${tail}`);
    builder.tailTokens = estimator.count(tail);
  }
  // Perf: with a page count, an item short enough to fit a page of its own (by a bound on tokens
  // per unit that ordinary text keeps) is not counted alone. One that breaks the bound still never
  // reaches a page whole: a page that cannot hold its first item truncates it (buildPage).
  if (
    builder.pageCount &&
    json.length * ITEM_TOKENS_PER_UNIT_BOUND + builder.overhead <= builder.maxTokens
  ) {
    return { match: m, json, tokens: -1, truncated: false };
  }
  const tokens = estimator.count(json);
  // Too large for a page of its own: a read cursor over its source text instead. The sum of the
  // two counts can exceed the page's own count by a token (each is rounded up), so a page on the
  // edge is counted whole before its value is given up.
  if (
    tokens + builder.overhead > builder.maxTokens &&
    estimator.count(`${frame.head}${json}${pageTail(frame, 1, frame.cursorFor(m.resume))}`) >
      builder.maxTokens
  ) {
    return truncatedItem(builder, m);
  }
  return { match: m, json, tokens, truncated: false };
}

const UTF8 = new TextDecoder("utf-8");

/**
 * The compact text of source bytes [start, end), or null once it is known to exceed `capBytes`
 * (then it cannot fit any page; reads stop there, so a huge value costs O(cap), not O(value)).
 */
async function compactValue(
  reader: ByteReader,
  start: number,
  end: number,
  capBytes: number,
  signal?: AbortSignal,
): Promise<string | null> {
  const span = end - start;
  if (span <= capBytes) {
    const bytes = await reader.read(start, span);
    return compactJsonRange(bytes, 0, bytes.length);
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  let inString = false;
  let escaped = false;
  for (let pos = start; pos < end; ) {
    signal?.throwIfAborted();
    const chunk = await reader.read(pos, Math.min(JSON_COMPACT_CHUNK_BYTES, end - pos));
    if (chunk.length === 0) break;
    const out = new Uint8Array(chunk.length);
    let j = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (inString) {
        out[j++] = b;
        if (escaped) escaped = false;
        else if (b === 0x5c) escaped = true;
        else if (b === 0x22) inString = false;
      } else if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
        out[j++] = b;
        if (b === 0x22) inString = true;
      }
    }
    total += j;
    if (total > capBytes) return null;
    parts.push(out.subarray(0, j));
    pos += chunk.length;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return UTF8.decode(all);
}
