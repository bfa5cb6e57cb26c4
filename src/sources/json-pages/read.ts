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
import { budgetTooSmall, fitItemCount, PagewiseError } from "../../core/index.js";
import {
  compactJsonText,
  compileQuery,
  detectFormat,
  type JsonFormat,
  type JsonLimits,
  type JsonMatch,
  type QueryLanguage,
  type ResumeState,
  runQuery,
} from "../../json/index.js";
import type { ByteReader } from "../../json/reader.js";
import type { SourceContext } from "../context.js";
import { checkCursorFilePath, cursorPathMismatch } from "../file-ref.js";
import { encodeReadCursor } from "../text/read-cursor.js";
import { type JsonBasis, openJsonBasis } from "./basis.js";
import { decodeJsonCursor, encodeJsonCursor, type JsonCursorState } from "./cursor.js";
import type { JsonHandle, JsonHandles } from "./handles.js";

/** Items per page when `max_items` is not given. */
export const DEFAULT_JSON_MAX_ITEMS = 100;
/** Largest `max_items`; larger requests are lowered to it and the page says so. */
export const MAX_JSON_MAX_ITEMS = 1000;

export type RequestedFormat = "auto" | JsonFormat;

export interface JsonReadRequest {
  readonly cursor?: string;
  readonly fileId?: string;
  readonly path?: string;
  readonly language?: QueryLanguage;
  readonly query?: string;
  readonly format?: RequestedFormat;
  readonly maxItems?: number;
  readonly maxTokens: number;
  readonly maxTokensLowered?: boolean;
  readonly limits?: Partial<JsonLimits>;
  readonly handles: JsonHandles;
}

interface Item {
  readonly match: JsonMatch;
  readonly json: string;
  readonly tokens: number;
  readonly truncated: boolean;
}

function invalidArgument(message: string, retry?: Record<string, unknown>): PagewiseError {
  return new PagewiseError("INVALID_ARGUMENT", message, {
    hint: "json_read takes exactly one of: {cursor}; {file_id, language, query}; {path, language, query, format?}.",
    ...(retry ? { retry } : {}),
  });
}

function cursorArgumentMismatch(name: string): PagewiseError {
  return new PagewiseError(
    "INVALID_CURSOR",
    `This cursor was made for a different ${name} than the one given.`,
    { hint: "Pass the cursor alone, or start again without a cursor to use new arguments." },
  );
}

function changedSinceOpen(): PagewiseError {
  return new PagewiseError(
    "CONTENT_CHANGED",
    "The file changed since json_open returned this file_id. Open it again (or pass path) to query the current content.",
    { hint: "Call json_open again, or json_read with path instead of file_id." },
  );
}

/** One page of `json_read` as the contract's JSON text. */
export async function jsonReadPage(ctx: SourceContext, req: JsonReadRequest): Promise<string> {
  const { caller, codec } = ctx;
  const roots = caller.roots;
  let state: JsonCursorState | undefined;
  let handle: JsonHandle | undefined;
  let target: string | undefined;
  let basis: JsonBasis;
  if (req.cursor !== undefined) {
    if (req.fileId !== undefined && req.path !== undefined)
      throw invalidArgument(
        "Pass the cursor alone (or with the one path or file_id it was made for).",
      );
    const decoded = decodeJsonCursor(codec, caller.identity, roots, req.cursor);
    state = decoded.state;
    if (req.language !== undefined && req.language !== state.language)
      throw cursorArgumentMismatch("language");
    if (req.query !== undefined && req.query !== state.query) throw cursorArgumentMismatch("query");
    if (req.format !== undefined && req.format !== "auto" && req.format !== state.format)
      throw cursorArgumentMismatch("format");
    if (req.fileId !== undefined) handle = req.handles.get(req.fileId, caller.identity);
    basis = await openJsonBasis(ctx, decoded.absolute, {
      digest: state.digest,
      fingerprint: state.fingerprint,
    });
  } else {
    if ((req.fileId === undefined) === (req.path === undefined)) {
      throw invalidArgument(
        req.fileId === undefined
          ? "Give the file to query: path (or a file_id from json_open), or a cursor."
          : "Give either file_id or path, not both.",
      );
    }
    if (req.language === undefined || req.query === undefined) {
      throw invalidArgument(
        'Give both language ("jsonpath" or "pointer") and query.',
        req.language === undefined ? { language: "jsonpath" } : undefined,
      );
    }
    if (req.fileId !== undefined) {
      handle = req.handles.get(req.fileId, caller.identity);
      if (req.format !== undefined && req.format !== "auto" && req.format !== handle.format) {
        throw invalidArgument(
          `This file_id was opened as ${handle.format}; a handle's format never changes. Leave out format, or call json_open with the format you want.`,
          { format: undefined },
        );
      }
      target = handle.realPath;
      basis = await openJsonBasis(
        ctx,
        target,
        { digest: handle.digest, fingerprint: handle.fingerprint },
        changedSinceOpen,
      );
    } else {
      basis = await openJsonBasis(ctx, req.path);
    }
  }
  try {
    if (state) {
      if (
        state.file.relPath !== basis.ref.relPath ||
        roots.dirs[state.file.rootIndex] !== roots.dirs[basis.ref.rootIndex]
      )
        throw cursorPathMismatch();
      if (handle && handle.realPath !== basis.realPath) throw cursorPathMismatch();
      await checkCursorFilePath(roots, req.path, basis.realPath);
    }
    let format: JsonFormat;
    if (state) format = state.format;
    else if (handle) format = handle.format;
    else if (req.format !== undefined && req.format !== "auto") format = req.format;
    else
      format = (await detectFormat(basis.reader, path.basename(basis.realPath), req.limits))
        .detected_format;
    const language = state?.language ?? (req.language as QueryLanguage);
    const query = state?.query ?? (req.query as string);
    const requestedItems = req.maxItems ?? state?.maxItems;
    let maxItems = requestedItems ?? DEFAULT_JSON_MAX_ITEMS;
    const lowered = maxItems > MAX_JSON_MAX_ITEMS;
    if (lowered) maxItems = MAX_JSON_MAX_ITEMS;
    const page = await buildPage(ctx, req, basis, {
      format,
      language,
      query,
      maxItems,
      cursorMaxItems: requestedItems === undefined ? undefined : maxItems,
      lowered: lowered ? requestedItems : undefined,
      resume: state?.resume,
      fileId: handle?.fileId,
    });
    await basis.confirmUnchanged();
    return page;
  } finally {
    await basis.close();
  }
}

interface PagePlan {
  readonly format: JsonFormat;
  readonly language: QueryLanguage;
  readonly query: string;
  readonly maxItems: number;
  /** max_items to carry in cursors (undefined: the default). */
  readonly cursorMaxItems: number | undefined;
  /** The max_items asked for when it was lowered. */
  readonly lowered: number | undefined;
  readonly resume: ResumeState | undefined;
  readonly fileId: string | undefined;
}

async function buildPage(
  ctx: SourceContext,
  req: JsonReadRequest,
  basis: JsonBasis,
  plan: PagePlan,
): Promise<string> {
  const { caller, codec, estimator } = ctx;
  const { version } = basis;
  // Matches arrive in document order, close together: value reads are served from a window.
  const reader = windowedReader(basis.reader);
  const maxTokens = req.maxTokens;
  const compiled = compileQuery(plan.language, plan.query, req.limits);
  // A value whose compact text is longer than this many bytes cannot fit in any page (a UTF-16
  // unit takes at most 3 bytes, a token covers at most maxUnitsPerToken units).
  const capBytes = maxTokens * estimator.maxUnitsPerToken * 3;

  const cursorFor = (resume: ResumeState): string =>
    encodeJsonCursor(codec, caller.identity, caller.roots, {
      file: basis.ref,
      digest: version.digest,
      fingerprint: version.fingerprint,
      format: plan.format,
      language: plan.language,
      query: plan.query,
      ...(plan.cursorMaxItems !== undefined ? { maxItems: plan.cursorMaxItems } : {}),
      resume,
    });
  const valueCursor = (m: JsonMatch): string =>
    encodeReadCursor(codec, caller.identity, caller.roots, {
      file: basis.ref,
      digest: version.digest,
      fingerprint: version.fingerprint,
      position: m.start,
      encoding: "utf-8",
      end: { kind: "byte", offset: m.end },
    });

  const head =
    "{" +
    (plan.fileId !== undefined ? `"file_id":${JSON.stringify(plan.fileId)},` : "") +
    `"language":${JSON.stringify(plan.language)},"query":${JSON.stringify(plan.query)},"items":[`;
  const skipped = plan.resume?.skip ?? 0;
  const extras =
    (plan.lowered !== undefined
      ? `,"max_items":${plan.maxItems},"note":${JSON.stringify(`max_items ${plan.lowered} was lowered to the maximum of ${plan.maxItems}.`)}`
      : "") + (req.maxTokensLowered ? `,"max_tokens":${maxTokens}` : "");

  const items: Item[] = [];
  let exhausted = false;
  let failure: unknown;
  const cursors = new Map<number, string>();
  const cursorAfter = (count: number): string => {
    let c = cursors.get(count);
    if (c === undefined) {
      const resume =
        count > 0
          ? items[count - 1]!.match.resume
          : (plan.resume ?? { offset: 0, path: [], skip: 0 });
      c = cursorFor(resume);
      cursors.set(count, c);
    }
    return c;
  };
  const hasMoreAfter = (count: number): boolean =>
    count < items.length || !exhausted || failure !== undefined;
  const render = (count: number): string => {
    const more = hasMoreAfter(count);
    let body = "";
    for (let i = 0; i < count; i++) body += (i > 0 ? "," : "") + items[i]!.json;
    return `${head}${body}],"complete":${!more},"next_cursor":${more ? JSON.stringify(cursorAfter(count)) : "null"},"stats":{"returned":${count},"skipped":${skipped}}${extras}}`;
  };

  let overhead = -1;
  const truncatedItem = (m: JsonMatch): Item => {
    const json = `{"path":${JSON.stringify(m.pointer)},"value_truncated":true,"value_bytes":${m.end - m.start},"value_cursor":${JSON.stringify(valueCursor(m))}}`;
    return { match: m, json, tokens: estimator.count(json), truncated: true };
  };
  const makeItem = async (m: JsonMatch): Promise<Item> => {
    const text = await compactValue(reader, m.start, m.end, capBytes, ctx.signal);
    if (text === null) return truncatedItem(m);
    const json = `{"path":${JSON.stringify(m.pointer)},"value":${text}}`;
    const tokens = estimator.count(json);
    if (overhead < 0)
      overhead = estimator.count(
        `${head}],"complete":false,"next_cursor":${JSON.stringify(cursorFor(m.resume))},"stats":{"returned":1,"skipped":${skipped}}${extras}}`,
      );
    // Too large for a page of its own: a read cursor over its source text instead.
    if (tokens + overhead > maxTokens) return truncatedItem(m);
    return { match: m, json, tokens, truncated: false };
  };

  const matches = runQuery(reader, plan.format, compiled, plan.resume, req.limits, ctx.signal);
  let sum = 0;
  try {
    for (;;) {
      // One match beyond max_items tells whether there are more (no empty last page).
      if (items.length > plan.maxItems) break;
      if (items.length > 0 && sum + Math.max(overhead, 0) > maxTokens) break;
      const next = await matches.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const item = await makeItem(next.value);
      items.push(item);
      sum += item.tokens + 1;
    }
  } catch (e) {
    failure = e;
  } finally {
    await matches.return(undefined).catch(() => undefined);
  }

  const available = Math.min(items.length, plan.maxItems);
  let fitted = fitItemCount(available, maxTokens, estimator, render);
  if (fitted.amount === 0 && available > 0 && !items[0]!.truncated) {
    items[0] = truncatedItem(items[0]!.match);
    fitted = fitItemCount(available, maxTokens, estimator, render);
  }
  if (fitted.amount === 0 && available > 0)
    throw budgetTooSmall(maxTokens, estimator.count(render(1)), "one match");
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
  return fitted.text;
}

const UTF8 = new TextDecoder("utf-8");
const WINDOW_BYTES = 256 * 1024;

/**
 * A reader that keeps the last window it read, so that reading many small values that lie close
 * together costs one positional read per window instead of one per value.
 */
function windowedReader(inner: ByteReader): ByteReader {
  let start = 0;
  let bytes: Uint8Array = new Uint8Array(0);
  return {
    size: inner.size,
    async read(position: number, length: number): Promise<Uint8Array> {
      const end = Math.min(inner.size, position + length);
      if (position >= start && end <= start + bytes.length)
        return bytes.subarray(position - start, end - start);
      if (length > WINDOW_BYTES) return inner.read(position, length);
      bytes = await inner.read(position, WINDOW_BYTES);
      start = position;
      return bytes.subarray(0, end - position);
    },
  };
}
const CHUNK = 64 * 1024;

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
  if (span <= capBytes) return compactJsonText(await reader.read(start, span));
  const parts: Uint8Array[] = [];
  let total = 0;
  let inString = false;
  let escaped = false;
  for (let pos = start; pos < end; ) {
    signal?.throwIfAborted();
    const chunk = await reader.read(pos, Math.min(CHUNK, end - pos));
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
