/**
 * @module
 * The `read` source: one text file, in line mode (plain text, bounded by a ceiling) or page mode
 * (JSON pages that fit a token budget, continued by signed cursors bound to the file's version).
 *
 * Page mode streams from a byte position: a page reads at most the bytes its budget could hold
 * (`maxTokens × maxUnitsPerToken × 3` for UTF-8), whatever the file's size or the position. Each
 * page says where it is (`position: {line, byte, size}`); the cursor carries the line it reached,
 * so that costs O(page).
 */
import type { BigIntStats } from "node:fs";
import { type Descriptor, openFileConfined } from "../../access/index.js";
import {
  budgetTooSmall,
  codePointFloor,
  completeUtf8Length,
  DEFAULT_MAX_TOKENS,
  type Estimator,
  type FileVersion,
  firstInvalidUtf8,
  fitLargest,
  fitTextPrefix,
  type GrowingText,
  type PageParam,
  type PageRequest,
  PagewiseError,
  type Prediction,
  type Source,
  STREAM_CHUNK_BYTES,
  TextCosts,
  versionString,
  WHOLE_REST_UNITS,
} from "../../core/index.js";
import {
  afterNthNewline,
  type ByteSource,
  countNewlineBytes,
  countNewlines,
  fileByteSource,
  findLineStart,
  keepLineCheckpoints,
  type LineCheckpoints,
  lineCheckpoints,
} from "../shared/byte-source.js";
import type { SourceContext } from "../shared/context.js";
import { checkCursorFilePath, type FileRef } from "../shared/file-ref.js";
import {
  checkAppendOnly,
  fileRewritten,
  INODE_FINGERPRINT_BYTES,
  onlyAppendedBetween,
  RANGE_ANCHOR_FULL_BYTES,
  rangeDigest,
  sameBytes,
  writeFingerprint,
} from "../shared/range-anchor.js";
import { READ_CURSOR, type ReadCursorState, type ReadEnd } from "../shared/read-cursor.js";
import {
  changedWhileReading,
  closeInBackground,
  openVersionedFile,
  readingAgainOnChange,
  type VersionedFile,
} from "../shared/versioned-file.js";

export type ReadEncoding = "utf-8" | "base64";

export interface ReadLinesRequest {
  readonly path: string | undefined;
  readonly offset?: number;
  readonly limit?: number;
  /** Ceiling on the estimated tokens of the returned text. */
  readonly maxReadTokens: number;
}

/** The arguments of a page-mode call (the budget travels as a page parameter). */
export interface ReadArgs {
  readonly path?: string;
  readonly offset?: number;
  readonly limit?: number;
  readonly encoding?: ReadEncoding;
}

type ReadState = ReadCursorState & { absolute?: string };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function notText(firstInvalidByte: number | undefined, maxTokens?: number): PagewiseError {
  return new PagewiseError(
    "NOT_TEXT",
    'The file is not valid UTF-8 text. Read it with encoding "base64" to get its raw bytes.',
    {
      retry: { encoding: "base64", ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}) },
      ...(firstInvalidByte !== undefined ? { location: { byte_offset: firstInvalidByte } } : {}),
    },
  );
}

/**
 * Line mode: the selected lines exactly as stored, or RESPONSE_TOO_LARGE over the ceiling. The
 * answer comes from one version, as a page does: read from a settled state that did not move while
 * the lines were read, or from one snapshot; a file that changed meanwhile is read again.
 */
export async function readLines(ctx: SourceContext, req: ReadLinesRequest): Promise<string> {
  return readingAgainOnChange(async () => {
    const file = await openVersionedFile(ctx, req.path);
    try {
      return await readLinesOf(ctx, req, file);
    } finally {
      closeInBackground(file.close);
    }
  });
}

async function readLinesOf(
  ctx: SourceContext,
  req: ReadLinesRequest,
  file: VersionedFile,
): Promise<string> {
  const source = file.bytes;
  const lines = lineIndexOf(file.version, source);
  const start = (await findLineStart(source, req.offset ?? 0, ctx.signal, lines.checkpoints)).byte;
  const maxBytes = req.maxReadTokens * ctx.estimator.maxUnitsPerToken * 3 + 4;
  const bytes = await readLineRange(ctx, source, start, req.limit, maxBytes);
  await file.confirmUnchanged();
  lines.keep();
  const tooLarge = (tokens?: number) =>
    new PagewiseError(
      "RESPONSE_TOO_LARGE",
      `The selected lines are ${tokens === undefined ? "more than" : "about"} ${tokens ?? req.maxReadTokens} tokens, over the ${req.maxReadTokens}-token limit for reading whole lines. Page through them with max_tokens, or select fewer lines with offset/limit.`,
      {
        retry: { max_tokens: Math.min(DEFAULT_MAX_TOKENS, req.maxReadTokens) },
        limit: {
          name: "max_read_tokens",
          limit: req.maxReadTokens,
          value: tokens ?? req.maxReadTokens + 1,
        },
      },
    );
  if (bytes === undefined) throw tooLarge();
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw notText(start + firstInvalidUtf8(bytes), DEFAULT_MAX_TOKENS);
  }
  const tokens = ctx.estimator.count(text);
  if (tokens > req.maxReadTokens) throw tooLarge(tokens);
  return text;
}

/**
 * The line checkpoints of a version, as a copy this call learns into, and `keep` to share what it
 * learned once the call confirmed the bytes were the version's (byte-source.ts).
 */
function lineIndexOf(
  version: FileVersion,
  bytes: ByteSource,
): { checkpoints: LineCheckpoints; keep: () => void } {
  const key = `${version.version}:${bytes.size}`;
  const checkpoints = lineCheckpoints(key);
  return { checkpoints, keep: () => keepLineCheckpoints(key, checkpoints) };
}

/** The bytes of `limit` lines from `start` (to the end without a limit); undefined past `maxBytes`. */
async function readLineRange(
  ctx: SourceContext,
  source: ByteSource,
  start: number,
  limit: number | undefined,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let taken = 0;
  let position = start;
  let linesLeft = limit ?? Number.POSITIVE_INFINITY;
  while (position < source.size && linesLeft > 0 && taken <= maxBytes) {
    ctx.signal?.throwIfAborted();
    let chunk = await source.read(position, Math.min(STREAM_CHUNK_BYTES, maxBytes + 1 - taken));
    if (chunk.length === 0) break;
    if (Number.isFinite(linesLeft)) {
      const cut = afterNthNewline(chunk, linesLeft);
      if (cut >= 0) {
        chunk = chunk.subarray(0, cut);
        linesLeft = 0;
      } else {
        linesLeft -= countNewlineBytes(chunk);
      }
    }
    parts.push(chunk);
    taken += chunk.length;
    position += chunk.length;
  }
  return taken > maxBytes ? undefined : Buffer.concat(parts);
}

/** The bytes and version one page is cut from. */
interface PageBasis {
  readonly bytes: ByteSource;
  readonly version: FileVersion;
  readonly uri: string;
  readonly ref: FileRef;
  /** CONTENT_CHANGED unless the file is still the version the page was cut from. */
  readonly confirm: () => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Where a page starts and what range it belongs to. */
interface PagePlan {
  readonly position: number;
  /** 1-based line at `position`, 0 when not known. */
  readonly line: number;
  readonly end: ReadEnd;
  readonly encoding: ReadEncoding;
  readonly anchor?: { readonly start: number; readonly size: number };
}

/** The `read` source of page mode; `maxTokens` is the budget parameter with the server's cap. */
export function createReadSource(maxTokens: PageParam): Source<ReadArgs, ReadState, SourceContext> {
  return {
    ...READ_CURSOR,
    params: [maxTokens],
    conflictWith(args, state) {
      if (args.offset !== undefined) return "offset";
      if (args.limit !== undefined) return "limit";
      if (args.encoding !== undefined && args.encoding !== state.encoding) return "encoding";
      return undefined;
    },
    page: readPage,
  };
}

async function readPage(request: PageRequest<ReadArgs, ReadState, SourceContext>): Promise<string> {
  const { context: ctx, args, state } = request;
  const maxTokens = request.params.max_tokens!;
  if (state?.absolute !== undefined) {
    await checkCursorFilePath(ctx.caller.roots, args.path, state.absolute);
  } else if (args.path === undefined) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      "Give the path of the file to read (or a cursor from a previous page).",
    );
  }
  // A first page may come from whichever version is current; a continuation only from its own.
  if (!state) return readingAgainOnChange(() => readPageOnce(request, maxTokens));
  return readPageOnce(request, maxTokens);
}

async function readPageOnce(
  request: PageRequest<ReadArgs, ReadState, SourceContext>,
  maxTokens: number,
): Promise<string> {
  const { context: ctx, args, state } = request;
  const basis = state?.anchor
    ? await anchoredBasis(ctx, state)
    : await versionedBasis(ctx, state, args.path);
  try {
    const encoding: ReadEncoding = state?.encoding ?? args.encoding ?? "utf-8";
    if (encoding === "utf-8" && basis.version.utf8 === false)
      throw notText(basis.version.firstInvalidByte, maxTokens);
    const { plan, keepLearned } = await planOf(ctx, basis, state, args, encoding);
    const page = await buildPage(request, basis, plan);
    await basis.confirm();
    keepLearned();
    return page;
  } finally {
    closeInBackground(basis.close);
  }
}

/** Where the page starts, and what finding it learned about line positions (kept once confirmed). */
async function planOf(
  ctx: SourceContext,
  basis: PageBasis,
  state: ReadState | undefined,
  args: ReadArgs,
  encoding: ReadEncoding,
): Promise<{ plan: PagePlan; keepLearned: () => void }> {
  if (state) {
    if (state.position > basis.bytes.size) throw changedWhileReading();
    const plan: PagePlan = {
      position: state.position,
      line: state.line,
      end: state.end,
      encoding,
      ...(state.anchor ? { anchor: state.anchor } : {}),
    };
    return { plan, keepLearned: () => undefined };
  }
  let start = { byte: 0, line: 1 };
  let keepLearned: () => void = () => undefined;
  if (args.offset) {
    const lines = lineIndexOf(basis.version, basis.bytes);
    start = await findLineStart(basis.bytes, args.offset, ctx.signal, lines.checkpoints);
    keepLearned = lines.keep;
  }
  const plan: PagePlan = {
    position: start.byte,
    line: start.line,
    end: args.limit !== undefined ? { kind: "lines", remaining: args.limit } : { kind: "eof" },
    encoding,
  };
  return { plan, keepLearned };
}

/** A whole-file version through the shared opener (see versioned-file.ts). */
async function versionedBasis(
  ctx: SourceContext,
  state: ReadState | undefined,
  path: string | undefined,
): Promise<PageBasis> {
  const file = await openVersionedFile(ctx, state?.absolute ?? path, {
    ...(state ? { expect: state, expectRef: state.file } : {}),
  });
  return {
    bytes: file.bytes,
    version: file.version,
    uri: file.uri,
    ref: file.ref,
    confirm: () => file.confirmUnchanged(),
    close: () => file.close(),
  };
}

/**
 * The basis of a range-anchored cursor (see range-anchor.ts): the same file (inode), still holding
 * the range, whose bytes hash as when the cursor was issued. Costs O(range), never O(file). A range
 * longer than RANGE_ANCHOR_FULL_BYTES is hashed only at its ends, so it is trusted only while the
 * file was not written at all since the cursor was issued (an append could hide a rewrite of its
 * middle): then any write is CONTENT_CHANGED.
 */
async function anchoredBasis(ctx: SourceContext, state: ReadState): Promise<PageBasis> {
  const opened = await openFileConfined(ctx.caller.roots, state.absolute);
  const { handle, stat: st } = opened;
  try {
    const end = state.end.kind === "byte" ? state.end.offset : 0;
    const start = state.anchor?.start ?? 0;
    checkAppendOnly(st, state.fingerprint, Math.max(end, state.anchor?.size ?? 0));
    if (
      end - start > RANGE_ANCHOR_FULL_BYTES &&
      !sameBytes(writeFingerprint(st), state.fingerprint.subarray(INODE_FINGERPRINT_BYTES))
    ) {
      throw fileRewritten("was written to");
    }
    const bytes = fileByteSource(handle, Number(st.size));
    const digest = await rangeDigest(bytes, start, end, state.digest.length);
    if (!sameBytes(digest, state.digest)) throw fileRewritten("was rewritten");
    const version: FileVersion = {
      version: versionString(digest),
      digest,
      fingerprint: state.fingerprint,
      utf8: true,
      size: Number(st.size),
    };
    return {
      bytes,
      version,
      uri: `file://${encodeURI(opened.realPath)}`,
      ref: state.file,
      confirm: () => confirmAppendOnly(handle, st, end),
      close: () => handle.close(),
    };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

async function confirmAppendOnly(handle: Descriptor, before: BigIntStats, needed: number) {
  if (!onlyAppendedBetween(before, await handle.stat(), needed)) throw changedWhileReading();
}

/**
 * Code units per token assumed for the first read window. An estimator's true bound may be much
 * larger (the default estimator's is 8; exact tokenizers have 128-character tokens of spaces), but
 * sizing every read by it would read several times the page (only what the page takes is decoded,
 * see DecodedWindow): code, logs and prose take 2–4 units per token of the default estimator. A
 * page that fills this window is cut again from a larger one.
 */
const FIRST_WINDOW_UNITS_PER_TOKEN = 5;

async function buildPage(
  request: PageRequest<ReadArgs, ReadState, SourceContext>,
  basis: PageBasis,
  plan: PagePlan,
): Promise<string> {
  const bound = request.context.estimator.maxUnitsPerToken;
  const first = Math.min(bound, FIRST_WINDOW_UNITS_PER_TOKEN);
  // Perf: most text is one byte per code unit, so the first window reads that much; a page that
  // fills it is cut again from a window sized for the worst case (3 bytes per unit), and then for
  // the estimator's bound on units per token.
  const attempts: Array<[number, number]> =
    plan.encoding === "utf-8"
      ? [
          [first, 1],
          [first, 3],
        ]
      : [[first, 3]];
  if (bound > first) attempts.push([bound, 3]);
  let [units, bytes] = attempts[0]!;
  let page = await buildPageWithin(request, basis, plan, units, bytes);
  for (const [nextUnits, nextBytes] of attempts.slice(1)) {
    if (!page.windowFilled) break;
    // The page took all the units the budget allowed for: more bytes alone would cut the same.
    if (page.unitsCapped && nextUnits === units) continue;
    [units, bytes] = [nextUnits, nextBytes];
    page = await buildPageWithin(request, basis, plan, units, bytes);
  }
  return page.text;
}

/** A page cut from a window. */
interface WindowPage {
  readonly text: string;
  /** It took all the window held, and the range goes on: a larger window may fit more. */
  readonly windowFilled: boolean;
  /** The window held more text than `unitsPerToken` allowed for, and the page took all of that. */
  readonly unitsCapped?: boolean;
}

/** The bytes a page may be cut from: at most what `unitsPerToken` says the budget can hold. */
interface Window {
  /** Byte offset of the window's first byte in the file. */
  readonly start: number;
  readonly bytes: Buffer;
  /** The window ends where the page's range ends. */
  readonly reachesEnd: boolean;
}

async function readWindow(basis: PageBasis, plan: PagePlan, wantBytes: number): Promise<Window> {
  const size = basis.bytes.size;
  const endByte = plan.end.kind === "byte" ? Math.min(plan.end.offset, size) : size;
  let bytes = await basis.bytes.read(
    plan.position,
    Math.max(0, Math.min(wantBytes, endByte - plan.position)),
  );
  let reachesEnd = plan.position + bytes.length >= endByte;
  if (plan.end.kind === "lines") {
    const cut = plan.end.remaining === 0 ? 0 : afterNthNewline(bytes, plan.end.remaining);
    if (cut >= 0) {
      bytes = bytes.subarray(0, cut);
      reachesEnd = true;
    }
  }
  return { start: plan.position, bytes, reachesEnd };
}

async function buildPageWithin(
  request: PageRequest<ReadArgs, ReadState, SourceContext>,
  basis: PageBasis,
  plan: PagePlan,
  unitsPerToken: number,
  bytesPerUnit: number,
): Promise<WindowPage> {
  const maxTokens = request.params.max_tokens!;
  // At least the whole rest a fit may take in one page (WHOLE_REST_UNITS), so that whether a
  // budget returns a page never depends on how much of the file that budget's window read.
  const unitsCap = Math.max(maxTokens * unitsPerToken, WHOLE_REST_UNITS + 1);
  const wantBytes =
    plan.encoding === "utf-8" ? unitsCap * bytesPerUnit + 4 : Math.ceil((unitsCap * 3) / 4) + 3;
  const window = await readWindow(basis, plan, wantBytes);
  const render = pageRenderer(request, basis, plan);
  return plan.encoding === "base64"
    ? fitBase64(request, window, render)
    : fitUtf8(request, window, unitsCap, render);
}

/**
 * The page holding `content`, the first `consumed` bytes of the window: `head`, the content as a
 * JSON string, then `tail(…)`.
 */
interface PageRenderer {
  readonly head: string;
  /** `newlines` counts the line ends in the content (asked only when a cursor needs them). */
  tail(consumed: number, newlines: () => number, hasMore: boolean): string;
}

function pageRenderer(
  request: PageRequest<ReadArgs, ReadState, SourceContext>,
  basis: PageBasis,
  plan: PagePlan,
): PageRenderer {
  const { version } = basis;
  const head = `{"uri":${JSON.stringify(basis.uri)},"content":`;
  const encodingField = plan.encoding === "base64" ? `,"encoding":"base64"` : "";
  const line = plan.line > 0 ? String(plan.line) : "null";
  const position = `,"position":{"line":${line},"byte":${plan.position},"size":${basis.bytes.size}}`;
  const middle = `,"version":${JSON.stringify(version.version)}${position}`;
  const tail = (consumed: number, contentNewlines: () => number, hasMore: boolean) => {
    let nextCursor = "null";
    if (hasMore) {
      const newlines = contentNewlines();
      const end: ReadEnd =
        plan.end.kind === "lines"
          ? { kind: "lines", remaining: plan.end.remaining - newlines }
          : plan.end;
      nextCursor = JSON.stringify(
        request.cursorAt({
          file: basis.ref,
          digest: version.digest,
          fingerprint: version.fingerprint,
          position: plan.position + consumed,
          line: plan.line > 0 ? plan.line + newlines : 0,
          encoding: plan.encoding,
          end,
          ...(plan.anchor ? { anchor: plan.anchor } : {}),
        }),
      );
    }
    return `${middle},"has_more":${hasMore},"next_cursor":${nextCursor}${encodingField}${request.loweredFields}}`;
  };
  return { head, tail };
}

function fitBase64(
  request: PageRequest<ReadArgs, ReadState, SourceContext>,
  window: Window,
  render: PageRenderer,
): WindowPage {
  const { estimator } = request.context;
  const maxTokens = request.params.max_tokens!;
  const available = window.bytes.length;
  const pageOf = (count: number) => {
    const content = window.bytes.subarray(0, count).toString("base64");
    const hasMore = !(count === available && window.reachesEnd);
    const newlines = () => countNewlineBytes(window.bytes, 0, count);
    return `${render.head}${JSON.stringify(content)}${render.tail(count, newlines, hasMore)}`;
  };
  const none = { amount: 0, text: pageOf(0), tokens: 0 };
  const fitted =
    available === 0
      ? { ...none, tokens: estimator.count(none.text) }
      : fitLargest({
          maxTokens,
          estimator,
          best: { ...none, tokens: estimator.count(none.text) },
          limit: available,
          render: pageOf,
          prediction: base64Prediction(window.bytes, estimator),
        });
  if (fitted.amount === 0 && available > 0) {
    throw budgetTooSmall(maxTokens, estimator.count(pageOf(1)), "one byte of content", () =>
      estimator.count(pageOf(1)),
    );
  }
  if (available === 0 && fitted.tokens > maxTokens)
    throw budgetTooSmall(maxTokens, fitted.tokens, "an empty page");
  return {
    text: fitted.text,
    windowFilled: fitted.amount === available && !window.reachesEnd,
  };
}

function fitUtf8(
  request: PageRequest<ReadArgs, ReadState, SourceContext>,
  window: Window,
  unitsCap: number,
  render: PageRenderer,
): WindowPage {
  const maxTokens = request.params.max_tokens!;
  const decoded = new DecodedWindow(window, unitsCap, maxTokens);
  const prefixes = new PrefixMeasures();
  // What follows the content on the page holding `units` units of text.
  const tail = (units: number) => {
    const { bytes, newlines } = prefixes.measure(decoded.text, units);
    const last = units === decoded.text.length && decoded.done && decoded.reachesEnd;
    return render.tail(bytes, () => newlines, !last);
  };
  const fitted = fitTextPrefix(
    decoded,
    maxTokens,
    request.context.estimator,
    (units) => `${render.head}${JSON.stringify(decoded.text.slice(0, units))}${tail(units)}`,
    { layout: { head: render.head, tail } },
  );
  // The page took all the text the window held, and there is more: a larger window may fit more.
  const windowFilled =
    fitted.amount === decoded.text.length &&
    decoded.done &&
    !decoded.reachesEnd &&
    (decoded.truncated || !window.reachesEnd);
  return { text: fitted.text, windowFilled, unitsCapped: windowFilled && decoded.truncated };
}

/** Bytes decoded at least at once: a fit's first pieces are small. */
const MIN_DECODE_BYTES = 16 * 1024;

/**
 * A window's text, decoded as the fit asks for it (`GrowingText`), at most `unitsCap` code units.
 * Perf: the window is sized for dense text, so a page takes a fraction of it (log lines: 54 KB of
 * 125 KB); decoding all of it was a tenth of a page's CPU.
 */
class DecodedWindow implements GrowingText {
  text = "";
  /** All the window's text is decoded (or the cap was reached). */
  done = false;
  /** The cap cut the text: the page cannot reach the end of the range. */
  truncated = false;
  readonly #bytes: Buffer;
  /** Bytes that end on a whole character (the window's last may be cut). */
  readonly #complete: number;
  readonly #unitsCap: number;
  readonly #maxTokens: number;
  readonly #windowReachesEnd: boolean;
  readonly #windowStart: number;
  #decodedBytes = 0;

  constructor(window: Window, unitsCap: number, maxTokens: number) {
    const bytes = window.bytes;
    this.#bytes = bytes;
    this.#complete = window.reachesEnd ? bytes.length : completeUtf8Length(bytes, bytes.length);
    this.#windowReachesEnd = window.reachesEnd;
    this.#windowStart = window.start;
    this.#unitsCap = unitsCap;
    this.#maxTokens = maxTokens;
    this.done = this.#complete === 0;
  }

  /** The text goes to the end of the page's range (once all of it is decoded). */
  get reachesEnd(): boolean {
    return this.#windowReachesEnd && this.#complete === this.#bytes.length && !this.truncated;
  }

  more(units: number): boolean {
    if (this.done) return false;
    // Bytes per unit so far (1 before any): ASCII text decodes byte for unit.
    const perUnit = this.text.length > 0 ? this.#decodedBytes / this.text.length : 1;
    const want = Math.max(MIN_DECODE_BYTES, Math.ceil(units * perUnit * 1.1));
    let end = Math.min(this.#complete, this.#decodedBytes + want);
    if (end < this.#complete) end = completeUtf8Length(this.#bytes, end);
    const piece = this.#bytes.subarray(this.#decodedBytes, end);
    try {
      this.text += decoder.decode(piece);
    } catch {
      // A version that is not a content hash does not know the file is not text until a page
      // reaches the bytes that are not: the error says where they are.
      const at = this.#windowStart + this.#decodedBytes + firstInvalidUtf8(piece);
      throw notText(at, this.#maxTokens);
    }
    this.#decodedBytes = end;
    if (this.text.length > this.#unitsCap) {
      // More text than the budget could ever hold.
      this.text = this.text.slice(0, codePointFloor(this.text, this.#unitsCap));
      this.truncated = true;
    }
    this.done = this.truncated || end >= this.#complete;
    return true;
  }
}

/** Costs of a byte range as it appears base64-encoded: 3 bytes are 4 characters. */
function base64Prediction(bytes: Buffer, estimator: Estimator): Prediction {
  const encoded = new TextCosts(bytes.toString("base64"), estimator);
  const chars = (count: number) => Math.ceil(count / 3) * 4;
  return {
    cost: (count) => encoded.cost(chars(count)),
    largestWithin: (tokens, from, limit) =>
      Math.max(
        from,
        Math.min(
          limit,
          Math.floor(encoded.largestWithin(tokens, chars(from), chars(limit)) / 4) * 3,
        ),
      ),
  };
}

/** UTF-8 bytes and line ends of a text's first `units` code units. */
interface PrefixMeasure {
  readonly units: number;
  readonly bytes: number;
  readonly newlines: number;
}

/**
 * Measures of prefixes of a growing text, each taken from the nearest prefix measured before (by
 * adding or taking off the text between). Perf: a page's tail is closed a few times as the fit
 * narrows down near the cut; measuring each candidate from the start was a tenth of a page's CPU.
 */
class PrefixMeasures {
  /** In order of `units`. */
  readonly #measured: PrefixMeasure[] = [{ units: 0, bytes: 0, newlines: 0 }];

  measure(text: string, units: number): PrefixMeasure {
    let below = this.#measured.length - 1;
    while (this.#measured[below]!.units > units) below--;
    const before = this.#measured[below]!;
    if (before.units === units) return before;
    const after = this.#measured[below + 1];
    // From the nearer side: the text between is added to the prefix before it, or taken off the
    // one after it.
    const fromAfter = after !== undefined && after.units - units < units - before.units;
    const near = fromAfter ? after : before;
    const sign = fromAfter ? -1 : 1;
    const piece = fromAfter ? text.slice(units, after.units) : text.slice(before.units, units);
    const measured = {
      units,
      bytes: near.bytes + sign * Buffer.byteLength(piece, "utf8"),
      newlines: near.newlines + sign * countNewlines(piece),
    };
    this.#measured.splice(below + 1, 0, measured);
    return measured;
  }
}
