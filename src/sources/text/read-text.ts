/**
 * @module
 * The `read` source: one text file, in line mode (plain text, bounded by a ceiling) or page mode
 * (JSON pages that fit a token budget, continued by signed cursors bound to the file's version).
 *
 * Page mode streams from a byte position: a page reads at most the bytes its budget could hold
 * (`maxTokens × maxUnitsPerToken × 3` for UTF-8), whatever the file's size or the position.
 */
import type { BigIntStats } from "node:fs";
import { openFileConfined } from "../../access/index.js";
import {
  budgetTooSmall,
  codePointFloor,
  completeUtf8Length,
  type FileVersion,
  FileVersions,
  fitItemCount,
  fitTextPrefix,
  identityKey,
  PagewiseError,
  versionString,
} from "../../core/index.js";
import type { SourceContext } from "../context.js";
import { checkCursorFilePath, refOfOpened } from "../file-ref.js";
import {
  afterNthNewline,
  type ByteSource,
  countNewlines,
  fileByteSource,
  findLineStart,
  memoryByteSource,
  readWhole,
} from "./byte-source.js";
import {
  checkAppendOnly,
  fileRewritten,
  onlyAppendedBetween,
  rangeDigest,
  sameBytes,
} from "./range-anchor.js";
import {
  decodeReadCursor,
  encodeReadCursor,
  type ReadCursorState,
  type ReadEnd,
} from "./read-cursor.js";

/** Recently modified files up to this size are read whole, so version and page share one read. */
const SNAPSHOT_MAX_BYTES = 8 * 1024 * 1024;

export type ReadEncoding = "utf-8" | "base64";

export interface ReadLinesRequest {
  readonly path: string | undefined;
  readonly offset?: number;
  readonly limit?: number;
  /** Ceiling on the estimated tokens of the returned text. */
  readonly maxReadTokens: number;
}

export interface ReadPageRequest {
  readonly path?: string;
  readonly offset?: number;
  readonly limit?: number;
  readonly cursor?: string;
  readonly encoding?: ReadEncoding;
  readonly maxTokens: number;
  /** Set when the caller asked for more than the server's cap: the page reports the applied budget. */
  readonly maxTokensLowered?: boolean;
}

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

function changedDuringRead(): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    "The file changed while this page was being read. Start again without a cursor.",
    { hint: "Call again with the same arguments but no cursor." },
  );
}

/** Line mode: the selected lines exactly as stored, or RESPONSE_TOO_LARGE over the ceiling. */
export async function readLines(ctx: SourceContext, req: ReadLinesRequest): Promise<string> {
  const opened = await openFileConfined(ctx.caller.roots, req.path);
  try {
    const st = await opened.handle.stat({ bigint: true });
    const source = fileByteSource(opened.handle, Number(st.size));
    const start = await findLineStart(source, req.offset ?? 0, ctx.signal);
    const maxBytes = req.maxReadTokens * ctx.estimator.maxUnitsPerToken * 3 + 4;
    const parts: Buffer[] = [];
    let taken = 0;
    let position = start;
    let linesLeft = req.limit ?? Number.POSITIVE_INFINITY;
    while (position < source.size && linesLeft > 0 && taken <= maxBytes) {
      ctx.signal?.throwIfAborted();
      let chunk = await source.read(position, Math.min(1 << 20, maxBytes + 1 - taken));
      if (chunk.length === 0) break;
      if (Number.isFinite(linesLeft)) {
        const cut = afterNthNewline(chunk, linesLeft);
        if (cut >= 0) {
          chunk = chunk.subarray(0, cut);
          linesLeft = 0;
        } else {
          linesLeft -= countNewlines(chunk.toString("latin1"));
        }
      }
      parts.push(chunk);
      taken += chunk.length;
      position += chunk.length;
    }
    const tooLarge = (tokens?: number) =>
      new PagewiseError(
        "RESPONSE_TOO_LARGE",
        `The selected lines are ${tokens === undefined ? "more than" : "about"} ${tokens ?? req.maxReadTokens} tokens, over the ${req.maxReadTokens}-token limit for reading whole lines. Page through them with max_tokens, or select fewer lines with offset/limit.`,
        {
          retry: { max_tokens: Math.min(8000, req.maxReadTokens) },
          limit: {
            name: "max_read_tokens",
            limit: req.maxReadTokens,
            value: tokens ?? req.maxReadTokens + 1,
          },
        },
      );
    if (taken > maxBytes) throw tooLarge();
    const bytes = Buffer.concat(parts);
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      throw notText(undefined, 8000);
    }
    const tokens = ctx.estimator.count(text);
    if (tokens > req.maxReadTokens) throw tooLarge(tokens);
    return text;
  } finally {
    await opened.handle.close();
  }
}

interface PageBasis {
  readonly source: ByteSource;
  readonly version: FileVersion;
  readonly stat: BigIntStats;
}

/** Page mode: one JSON page within `maxTokens`, and a cursor to the rest. */
export async function readPage(ctx: SourceContext, req: ReadPageRequest): Promise<string> {
  const { caller, codec } = ctx;
  let state: ReadCursorState | undefined;
  let target = req.path;
  if (req.cursor !== undefined) {
    const decoded = decodeReadCursor(codec, caller.identity, caller.roots, req.cursor);
    state = decoded.state;
    await checkCursorFilePath(caller.roots, req.path, decoded.absolute);
    target = decoded.absolute;
  }
  const opened = await openFileConfined(caller.roots, target);
  try {
    const file = refOfOpened(caller.roots, opened, state?.file);
    const basis = await pageBasis(ctx, opened.handle, state);
    const encoding: ReadEncoding = state?.encoding ?? req.encoding ?? "utf-8";
    if (encoding === "utf-8" && !basis.version.utf8)
      throw notText(basis.version.firstInvalidByte, req.maxTokens);
    let position: number;
    let end: ReadEnd;
    if (state) {
      position = state.position;
      end = state.end;
      if (position > basis.source.size) throw changedDuringRead();
    } else {
      position = req.offset ? await findLineStart(basis.source, req.offset, ctx.signal) : 0;
      end = req.limit !== undefined ? { kind: "lines", remaining: req.limit } : { kind: "eof" };
    }
    const page = await buildPage(ctx, req, basis, {
      uri: `file://${encodeURI(opened.realPath)}`,
      file,
      position,
      end,
      encoding,
      ...(state?.anchor ? { anchor: state.anchor } : {}),
    });
    // The identity must not have moved while the page was read (a trusted version is only as good
    // as the metadata it was trusted under). A range-anchored cursor tolerates appends.
    const after = await opened.handle.stat({ bigint: true });
    if (
      state?.anchor && end.kind === "byte"
        ? !onlyAppendedBetween(basis.stat, after, end.offset)
        : identityKey(after) !== identityKey(basis.stat)
    )
      throw changedDuringRead();
    return page;
  } finally {
    await opened.handle.close();
  }
}

async function pageBasis(
  ctx: SourceContext,
  handle: import("node:fs/promises").FileHandle,
  state: ReadCursorState | undefined,
): Promise<PageBasis> {
  const st = await handle.stat({ bigint: true });
  const size = Number(st.size);
  if (state?.anchor && state.end.kind === "byte") return anchoredBasis(handle, st, state);
  let basis: PageBasis;
  if (FileVersions.isRacy(st) && size <= SNAPSHOT_MAX_BYTES) {
    const bytes = await readWhole(handle, size);
    basis = {
      source: memoryByteSource(bytes),
      version: FileVersions.versionOfBytes(bytes),
      stat: st,
    };
  } else {
    const expect = state ? { digest: state.digest, fingerprint: state.fingerprint } : undefined;
    const version = await ctx.versions.versionOf(handle, st, expect, ctx.signal);
    const now = await handle.stat({ bigint: true });
    basis = { source: fileByteSource(handle, Number(now.size)), version, stat: now };
  }
  if (state)
    FileVersions.check(basis.version, { digest: state.digest, fingerprint: state.fingerprint });
  return basis;
}

/**
 * The basis of a range-anchored cursor (see range-anchor.ts): the same file (inode), still holding
 * the range, whose bytes hash as when the cursor was issued. Costs O(range), never O(file).
 */
async function anchoredBasis(
  handle: import("node:fs/promises").FileHandle,
  st: BigIntStats,
  state: ReadCursorState,
): Promise<PageBasis> {
  const end = state.end.kind === "byte" ? state.end.offset : 0;
  const start = state.anchor?.start ?? 0;
  checkAppendOnly(st, state.fingerprint, Math.max(end, state.anchor?.size ?? 0));
  const size = Number(st.size);
  const source = fileByteSource(handle, size);
  const digest = await rangeDigest(source, start, end, state.digest.length);
  if (!sameBytes(digest, state.digest)) throw fileRewritten("was rewritten");
  const version: FileVersion = {
    version: versionString(digest),
    digest,
    fingerprint: state.fingerprint,
    utf8: true,
    size,
  };
  return { source, version, stat: st };
}

interface PagePlan {
  readonly uri: string;
  readonly file: { rootIndex: number; relPath: string };
  readonly position: number;
  readonly end: ReadEnd;
  readonly encoding: ReadEncoding;
  readonly anchor?: { readonly start: number; readonly size: number };
}

/**
 * Code units per token assumed for the first read window. An estimator's true bound may be much
 * larger (exact tokenizers have 128-character tokens of spaces), but sizing every read by it would
 * read megabytes per page; a page that fills this window is re-read with the true bound.
 */
const FIRST_WINDOW_UNITS_PER_TOKEN = 8;

async function buildPage(
  ctx: SourceContext,
  req: ReadPageRequest,
  basis: PageBasis,
  plan: PagePlan,
): Promise<string> {
  const bound = ctx.estimator.maxUnitsPerToken;
  const first = Math.min(bound, FIRST_WINDOW_UNITS_PER_TOKEN);
  const page = await buildPageWithin(ctx, req, basis, plan, first);
  if (page.windowFilled && bound > first) {
    return (await buildPageWithin(ctx, req, basis, plan, bound)).text;
  }
  return page.text;
}

async function buildPageWithin(
  ctx: SourceContext,
  req: ReadPageRequest,
  basis: PageBasis,
  plan: PagePlan,
  unitsPerToken: number,
): Promise<{ text: string; windowFilled: boolean }> {
  const { estimator, codec, caller } = ctx;
  const { source, version } = basis;
  const maxTokens = req.maxTokens;
  const unitsCap = maxTokens * unitsPerToken;
  // Where the range ends, in bytes, if known up front.
  const endByte = plan.end.kind === "byte" ? Math.min(plan.end.offset, source.size) : source.size;
  const wantBytes =
    plan.encoding === "utf-8" ? unitsCap * 3 + 4 : Math.ceil((unitsCap * 3) / 4) + 3;
  let window = await source.read(
    plan.position,
    Math.max(0, Math.min(wantBytes, endByte - plan.position)),
  );
  let windowReachesEnd = plan.position + window.length >= endByte;
  if (plan.end.kind === "lines") {
    const cut = plan.end.remaining === 0 ? 0 : afterNthNewline(window, plan.end.remaining);
    if (cut >= 0) {
      window = window.subarray(0, cut);
      windowReachesEnd = true;
    }
  }

  const pageFor = (content: string, consumedBytes: number, hasMore: boolean): string => {
    let nextCursor: string | null = null;
    if (hasMore) {
      const nextEnd: ReadEnd =
        plan.end.kind === "lines"
          ? {
              kind: "lines",
              remaining:
                plan.end.remaining - countNewlinesIn(content, plan.encoding, window, consumedBytes),
            }
          : plan.end;
      nextCursor = encodeReadCursor(codec, caller.identity, caller.roots, {
        file: plan.file,
        digest: version.digest,
        fingerprint: version.fingerprint,
        position: plan.position + consumedBytes,
        encoding: plan.encoding,
        end: nextEnd,
        ...(plan.anchor ? { anchor: plan.anchor } : {}),
      });
    }
    const page: Record<string, unknown> = {
      uri: plan.uri,
      content,
      version: version.version,
      has_more: hasMore,
      next_cursor: nextCursor,
    };
    if (plan.encoding === "base64") page.encoding = "base64";
    if (req.maxTokensLowered) page.max_tokens = maxTokens;
    return JSON.stringify(page);
  };

  if (plan.encoding === "base64") {
    const available = window.length;
    const render = (count: number) =>
      pageFor(
        window.subarray(0, count).toString("base64"),
        count,
        !(count === available && windowReachesEnd),
      );
    const fitted = fitItemCount(available, maxTokens, estimator, render);
    if (fitted.amount === 0 && available > 0) {
      throw budgetTooSmall(maxTokens, estimator.count(render(1)), "one byte of content");
    }
    if (available === 0 && fitted.tokens > maxTokens)
      throw budgetTooSmall(maxTokens, fitted.tokens, "an empty page");
    return { text: fitted.text, windowFilled: fitted.amount === available && !windowReachesEnd };
  }

  const complete = windowReachesEnd ? window.length : completeUtf8Length(window, window.length);
  let text: string;
  try {
    text = decoder.decode(window.subarray(0, complete));
  } catch {
    throw notText(undefined, maxTokens);
  }
  let reachesEnd = windowReachesEnd && complete === window.length;
  let truncated = false;
  if (text.length > unitsCap) {
    // More text than the budget could ever hold: the page cannot reach the end of the range.
    text = text.slice(0, codePointFloor(text, unitsCap));
    reachesEnd = false;
    truncated = true;
  }
  const fullText = text.length;
  const render = (units: number) => {
    const content = units === fullText ? text : text.slice(0, units);
    return pageFor(
      content,
      Buffer.byteLength(content, "utf8"),
      !(units === fullText && reachesEnd),
    );
  };
  const fitted = fitTextPrefix(text, maxTokens, estimator, render);
  // The page took all the text the window held, and there is more: a larger window might fit more.
  const windowFilled =
    fitted.amount === fullText && !reachesEnd && (truncated || !windowReachesEnd);
  return { text: fitted.text, windowFilled };
}

function countNewlinesIn(
  content: string,
  encoding: ReadEncoding,
  window: Buffer,
  consumedBytes: number,
): number {
  if (encoding === "utf-8") return countNewlines(content);
  let n = 0;
  for (let i = 0; i < consumedBytes; i++) if (window[i] === 0x0a) n++;
  return n;
}
