/**
 * @module
 * The engine's entry points: compile a query, run it over a positional reader (from the start or
 * from a resume state), detect a file's format and validate it.
 */

import { PagewiseError } from "../core/index.js";
import { BACKSLASH, decodeStringContent, LF, QUOTE, RS } from "./bytes.js";
import { type LookaheadRequest, QueryEvaluator } from "./evaluator.js";
import { absoluteQueriesOf, type EvalContext, type Value } from "./filter-eval.js";
import type { FilterQuery, Segment, Selector } from "./jsonpath-ast.js";
import { parseJsonPath } from "./jsonpath-parser.js";
import {
  type JsonLimits,
  READ_CHUNK_BYTES,
  REGEX_FEED_SLICE_BYTES,
  REGEX_YIELD_STEPS,
  resolveLimits,
} from "./limits.js";
import { compilePointer } from "./pointer.js";
import type { ByteReader } from "./reader.js";
import type { ResumeState } from "./resume.js";
import {
  type JsonFormat,
  KIND_ARRAY,
  KIND_OBJECT,
  KIND_SEQ,
  type ResumeLevel,
  Tokenizer,
  type TokenSink,
} from "./tokenizer.js";

export type QueryLanguage = "pointer" | "jsonpath";

let feedSliceBytes = 8 * 1024;

/** Tests only: feed smaller slices to exercise lookahead and buffering paths. */
export function setFeedSliceBytesForTests(bytes: number): void {
  feedSliceBytes = bytes;
}

export interface CompiledQuery {
  readonly language: QueryLanguage;
  readonly query: string;
  readonly segments: Segment[];
  /** Absolute queries (`$…`) used inside filters: evaluated by a pass of their own before the scan. */
  readonly absolute: FilterQuery[];
}

export interface JsonMatch {
  /** RFC 6901 pointer of the match. */
  pointer: string;
  /** Byte range of the match's source text. */
  start: number;
  end: number;
  /** State to continue after this match. */
  resume: ResumeState;
}

export interface FormatDetection {
  detected_format: JsonFormat;
  /** `rs_prefix`, `extension`, `leading_lines` or `default`. */
  basis: "rs_prefix" | "extension" | "leading_lines" | "default";
  confidence: "high" | "medium" | "low";
}

export interface ValidationResult {
  complete: boolean;
  bytes_examined: number;
  records_examined?: number;
}

/** Parses a query; throws QUERY_SYNTAX_ERROR (or RESOURCE_LIMIT_EXCEEDED for an oversized regex). */
export function compileQuery(
  language: QueryLanguage,
  query: string,
  limits?: Partial<JsonLimits>,
): CompiledQuery {
  const lim = resolveLimits(limits);
  if (language === "pointer")
    return { language, query, segments: compilePointer(query), absolute: [] };
  if (language !== "jsonpath") {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      `Unknown query language ${JSON.stringify(language)}`,
      {
        hint: 'Use "pointer" (RFC 6901) or "jsonpath" (RFC 9535).',
      },
    );
  }
  const segments = parseJsonPath(query, lim);
  const absolute: FilterQuery[] = [];
  const visit = (sels: Selector[]): void => {
    for (const sel of sels) if (sel.kind === "filter") absoluteQueriesOf(sel.expr, absolute);
  };
  for (const seg of segments) visit(seg.selectors);
  return { language, query, segments, absolute };
}

/**
 * Runs `compiled` over the source and yields its matches in RFC 9535 order. With `resume`, re-enters
 * the source at the resume state's offset (reading nothing before it) and continues after the match
 * the state was made for. Stop consuming whenever a page is full; the last match's `resume` is the
 * state to continue from.
 */
export function runQuery(
  reader: ByteReader,
  format: JsonFormat,
  compiled: CompiledQuery,
  resume?: ResumeState,
  limits?: Partial<JsonLimits>,
  signal?: AbortSignal,
): AsyncGenerator<JsonMatch, void, undefined> {
  return new MatchIterator(runQueryBatches(reader, format, compiled, resume, limits, signal));
}

/**
 * Hands out the matches of {@link runQueryBatches} one by one. Perf: an async generator allocates a
 * request and several promises per `yield`; the driver yields once per chunk read instead, and a match
 * already in hand costs one resolved promise. Reads happen exactly when they did with one `yield` per
 * match: the next batch is asked for only once this one is used up.
 */
class MatchIterator implements AsyncGenerator<JsonMatch, void, undefined> {
  #batch: JsonMatch[] = [];
  #at = 0;
  constructor(readonly batches: AsyncGenerator<JsonMatch[], void, undefined>) {}

  #fetching: Promise<IteratorResult<JsonMatch, void>> | null = null;

  next(): Promise<IteratorResult<JsonMatch, void>> {
    // A call made while the next batch is on its way waits for it (requests stay in order).
    if (this.#fetching) return this.#fetching.then(() => this.next());
    if (this.#at < this.#batch.length)
      return Promise.resolve({ done: false, value: this.#batch[this.#at++] });
    const fetching = this.#nextBatch();
    this.#fetching = fetching;
    const clear = (): void => {
      if (this.#fetching === fetching) this.#fetching = null;
    };
    fetching.then(clear, clear);
    return fetching;
  }

  async #nextBatch(): Promise<IteratorResult<JsonMatch, void>> {
    while (this.#at >= this.#batch.length) {
      const r = await this.batches.next();
      if (r.done) return { done: true, value: undefined };
      this.#batch = r.value;
      this.#at = 0;
    }
    return { done: false, value: this.#batch[this.#at++] };
  }

  async return(): Promise<IteratorResult<JsonMatch, void>> {
    this.#batch = [];
    this.#at = 0;
    await this.batches.return(undefined);
    return { done: true, value: undefined };
  }

  async throw(e: unknown): Promise<IteratorResult<JsonMatch, void>> {
    this.#batch = [];
    this.#at = 0;
    await this.batches.return(undefined);
    throw e;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * Like {@link runQuery}, but hands out the matches in batches (those released by each slice of
 * input fed to the tokenizer, `skip` applied, in order), for a consumer that handles many matches
 * per page: no promise per match. Stop consuming (`return()`) when the page is full. The driver of
 * {@link runQuery}.
 */
export async function* runQueryBatches(
  reader: ByteReader,
  format: JsonFormat,
  compiled: CompiledQuery,
  resume?: ResumeState,
  limits?: Partial<JsonLimits>,
  signal?: AbortSignal,
): AsyncGenerator<JsonMatch[], void, undefined> {
  const lim = resolveLimits(limits);
  const started = await startQuery(reader, format, compiled, resume, lim, signal);
  if (!started) return;
  const { ev, tok, ctx, startOffset } = started;
  let pos = startOffset;
  // A query that tests regular expressions is fed in small slices, and gives the event loop a
  // turn whenever its tests have taken REGEX_YIELD_STEPS: however many strings a chunk holds, the
  // thread that serves requests is held for a bounded time.
  const sliceBytes = callsRegex(compiled) ? REGEX_FEED_SLICE_BYTES : feedSliceBytes;
  let stepsAtYield = 0;
  const released = releasedMatches(ev, resume?.skip ?? 0);
  const size = reader.size;
  try {
    while (pos < size) {
      if (signal?.aborted) throw cancelled();
      if (ev.finished && !(format === "json" && ev.rootDone)) break;
      const chunk = await reader.read(pos, Math.min(READ_CHUNK_BYTES, size - pos));
      if (chunk.length === 0) break;
      // Perf: fed in slices so that a lookahead request (see evaluator.ts) is served before many
      // matches pile up behind it, and so that a consumer that stops (a full page) has the
      // tokenizer go at most one slice past its last match; the tokenizer does not care where
      // chunks are cut.
      for (let at = 0; at < chunk.length; at += sliceBytes) {
        tok.feed(chunk.subarray(at, at + sliceBytes));
        if ((ctx.regexSteps ?? 0) - stepsAtYield >= REGEX_YIELD_STEPS) {
          stepsAtYield = ctx.regexSteps ?? 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (signal?.aborted) throw cancelled();
        }
        while (ev.lookahead) {
          ev.resolveLookahead(await scanForMember(reader, format, lim, ev.lookahead, signal));
        }
        const out = released();
        if (out) yield out;
      }
      pos += chunk.length;
    }
    if (pos >= size) tok.end();
  } catch (e) {
    // Matches released before the problem are still delivered (they were complete and in order),
    // so whether a page fails does not depend on where chunks happen to be cut.
    const error = await withAbsoluteLocation(e, reader, startOffset);
    const rest = released();
    if (rest) yield rest;
    throw error;
  }
  const rest = released();
  if (rest) yield rest;
}

/** Whether the query calls `match()` or `search()` (RFC 9535: no space before the parenthesis). */
function callsRegex(compiled: CompiledQuery): boolean {
  return compiled.language === "jsonpath" && /(?:match|search)\(/.test(compiled.query);
}

/**
 * The evaluator and tokenizer of a query, positioned at the start or at `resume`; undefined when
 * the resume point is past the last record of a JSONL / JSON-seq source (nothing follows).
 */
async function startQuery(
  reader: ByteReader,
  format: JsonFormat,
  compiled: CompiledQuery,
  resume: ResumeState | undefined,
  lim: JsonLimits,
  signal: AbortSignal | undefined,
): Promise<
  { ev: QueryEvaluator; tok: Tokenizer; ctx: EvalContext; startOffset: number } | undefined
> {
  if (compiled.segments.length === 0 && format !== "json") {
    throw new PagewiseError(
      "UNSUPPORTED_QUERY_FEATURE",
      "The whole JSONL / JSON-seq file is not one JSON value",
      {
        hint: 'Its records form a virtual array: select records with "/0" or "$[*]", or their members with "$[*].name".',
      },
    );
  }
  const ctx: EvalContext = { limits: lim };
  if (compiled.absolute.length > 0)
    ctx.absolute = await evaluateAbsolute(reader, format, compiled, lim, signal);
  const ev = new QueryEvaluator(compiled.segments, format !== "json", lim, ctx);
  const tok = new Tokenizer(format, lim, ev);
  ev.attach(tok);
  const startOffset = resume && resume.offset > 0 ? resume.offset : 0;
  if (startOffset > 0 && resume && resume.path.length === 0 && format !== "json") return undefined;
  if (startOffset > 0 && resume) {
    if (startOffset > reader.size) staleResume();
    const state = await resolvePath(reader, resume, lim);
    tok.resumeAfterValue(startOffset, levelsOf(format, state));
    ev.resumeFrom(state);
  } else tok.start();
  return { ev, tok, ctx, startOffset };
}

/** Takes the matches the evaluator released since the last call, less the first `skip` overall. */
function releasedMatches(ev: QueryEvaluator, skip: number): () => JsonMatch[] | null {
  return () => {
    const count = ev.out.length;
    if (count === 0) return null;
    if (count <= skip) {
      skip -= count;
      ev.out.length = 0;
      return null;
    }
    const out = ev.out.splice(0, count);
    const from = skip;
    skip = 0;
    return from > 0 ? out.slice(from) : out;
  };
}

/** Detects the format of a source (see the contract's json_open). */
export async function detectFormat(
  reader: ByteReader,
  fileName: string,
  limits?: Partial<JsonLimits>,
): Promise<FormatDetection> {
  const lim = resolveLimits(limits);
  const head = await reader.read(0, Math.min(reader.size, READ_CHUNK_BYTES));
  if (head.length > 0 && head[0] === RS)
    return { detected_format: "json-seq", basis: "rs_prefix", confidence: "high" };
  const lower = fileName.toLowerCase();
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) {
    return { detected_format: "jsonl", basis: "extension", confidence: "high" };
  }
  if (await leadingLinesAreValues(reader, lim)) {
    return { detected_format: "jsonl", basis: "leading_lines", confidence: "high" };
  }
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (
    i < head.length &&
    (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d)
  )
    i++;
  const first = head[i];
  return {
    detected_format: "json",
    basis: "default",
    confidence: first === 0x7b || first === 0x5b ? "medium" : "low",
  };
}

/** Two or more leading non-empty lines that are each one complete JSON value (within the probe window). */
async function leadingLinesAreValues(reader: ByteReader, lim: JsonLimits): Promise<boolean> {
  const window = Math.min(reader.size, lim.probeBytes);
  let pos = 0;
  let line: Uint8Array[] = [];
  let lineBytes = 0;
  let good = 0;
  const checkLine = (): boolean | null => {
    // null: blank line (skipped); true/false: a complete value or not.
    const bytes = concat(line, lineBytes);
    line = [];
    lineBytes = 0;
    let k = 0;
    if (pos === 0 || (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)) {
      /* a BOM on the first line is allowed */
    }
    while (k < bytes.length && (bytes[k] === 0x20 || bytes[k] === 0x09 || bytes[k] === 0x0d)) k++;
    if (k === bytes.length) return null;
    try {
      const tok = new Tokenizer("json", lim);
      tok.start();
      tok.feed(bytes);
      tok.end();
      return true;
    } catch {
      return false;
    }
  };
  while (pos < window) {
    const chunk = await reader.read(pos, Math.min(READ_CHUNK_BYTES, window - pos));
    if (chunk.length === 0) break;
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== LF) continue;
      line.push(chunk.subarray(from, i));
      lineBytes += i - from;
      from = i + 1;
      const r = checkLine();
      if (r === false) return false;
      if (r === true && ++good >= 2) return true;
    }
    line.push(chunk.subarray(from));
    lineBytes += chunk.length - from;
    pos += chunk.length;
  }
  if (pos >= reader.size && lineBytes > 0) {
    const r = checkLine();
    if (r === true) good++;
  }
  return good >= 2;
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

class CountingSink implements TokenSink {
  records = 0;
  constructor(private readonly tok: () => Tokenizer) {}
  open(): void {}
  key(): void {}
  close(): void {
    if (this.tok().depth === 1) this.records++;
  }
  scalar(): void {
    if (this.tok().depth === 1) this.records++;
  }
}

/**
 * Validates the source strictly: `probe` checks the first `probe_bytes` (complete: false when the
 * source is larger), `full` the whole source. Throws the first problem found.
 */
export async function validate(
  reader: ByteReader,
  format: JsonFormat,
  mode: "probe" | "full",
  limits?: Partial<JsonLimits>,
  signal?: AbortSignal,
): Promise<ValidationResult> {
  const lim = resolveLimits(limits);
  let tok: Tokenizer | null = null;
  const sink = new CountingSink(() => tok!);
  tok = new Tokenizer(format, lim, sink);
  tok.start();
  const limit = mode === "probe" ? Math.min(reader.size, lim.probeBytes) : reader.size;
  let pos = 0;
  while (pos < limit) {
    if (signal?.aborted) throw cancelled();
    const chunk = await reader.read(pos, Math.min(READ_CHUNK_BYTES, limit - pos));
    if (chunk.length === 0) break;
    tok.feed(chunk);
    pos += chunk.length;
  }
  const complete = pos >= reader.size;
  if (complete) tok.end();
  const result: ValidationResult = { complete, bytes_examined: pos };
  if (format !== "json") result.records_examined = sink.records;
  return result;
}

// --- helpers ------------------------------------------------------------------------------------

/** Finds member `req.name` of the object open at `req.level`, scanning from `req.offset` to its end. */
async function scanForMember(
  reader: ByteReader,
  format: JsonFormat,
  lim: JsonLimits,
  req: LookaheadRequest,
  signal?: AbortSignal,
): Promise<{ start: number; end: number } | null> {
  const level = req.level;
  let tok: Tokenizer | null = null;
  let watching = false;
  let start = -1;
  let found: { start: number; end: number } | null = null;
  let done = false;
  const sink: TokenSink = {
    key(name) {
      if (tok!.depth === level + 1) watching = name === req.name;
    },
    open(_kind, at) {
      if (watching && tok!.depth === level + 2) start = at;
    },
    close(end) {
      const depth = tok!.depth;
      if (watching && depth === level + 1 && start >= 0) {
        found = { start, end };
        done = true;
      } else if (depth === level) done = true;
    },
    scalar(_type, at, end) {
      if (watching && tok!.depth === level + 1) {
        found = { start: at, end };
        done = true;
      }
    },
  };
  tok = new Tokenizer(format, lim, sink);
  tok.resumeAfterValue(req.offset, req.levels);
  let pos = req.offset;
  try {
    while (!done && pos < reader.size) {
      if (signal?.aborted) throw cancelled();
      const chunk = await reader.read(pos, Math.min(READ_CHUNK_BYTES, reader.size - pos));
      if (chunk.length === 0) break;
      tok.feed(chunk);
      pos += chunk.length;
    }
  } catch (e) {
    throw await withAbsoluteLocation(e, reader, req.offset);
  }
  return found;
}

async function evaluateAbsolute(
  reader: ByteReader,
  format: JsonFormat,
  compiled: CompiledQuery,
  lim: JsonLimits,
  signal?: AbortSignal,
): Promise<Map<FilterQuery, Value[]>> {
  const out = new Map<FilterQuery, Value[]>();
  const decoder = new TextDecoder();
  for (const q of compiled.absolute) {
    if (q.segments.length === 0 && format !== "json") {
      throw new PagewiseError(
        "UNSUPPORTED_QUERY_FEATURE",
        "'$' alone inside a filter is the whole JSONL / JSON-seq file",
        {
          hint: "Refer to records ($[0]) or their members instead.",
        },
      );
    }
    const sub: CompiledQuery = {
      language: "jsonpath",
      // The whole query's text: a sub-query calls match()/search() only if the query does.
      query: compiled.query,
      segments: q.segments,
      absolute: [],
    };
    const nested: FilterQuery[] = [];
    for (const seg of q.segments)
      for (const sel of seg.selectors)
        if (sel.kind === "filter") absoluteQueriesOf(sel.expr, nested);
    (sub as { absolute: FilterQuery[] }).absolute = nested;
    const values: Value[] = [];
    let bytes = 0;
    for await (const m of runQuery(reader, format, sub, undefined, lim, signal)) {
      bytes += m.end - m.start;
      if (bytes > lim.maxFilterValueBytes) {
        throw new PagewiseError(
          "RESOURCE_LIMIT_EXCEEDED",
          "An absolute query inside a filter selects too much",
          {
            limit: { name: "max_filter_value_bytes", limit: lim.maxFilterValueBytes, value: bytes },
            hint: "Use a more specific absolute query ($.config.threshold rather than $..*).",
          },
        );
      }
      const text = decoder.decode(await reader.read(m.start, m.end - m.start));
      values.push(toValue(JSON.parse(text)));
    }
    out.set(q, values);
  }
  return out;
}

/** A parsed JSON value in the filter form (objects as Maps). Iterative: values may nest as deep as max_depth allows. */
function toValue(root: unknown): Value {
  const convert = (v: unknown): Value => {
    if (Array.isArray(v)) return new Array<Value>(v.length);
    if (v !== null && typeof v === "object") return new Map<string, Value>();
    return v as Value;
  };
  const out = convert(root);
  const work: [unknown, Value][] = [[root, out]];
  while (work.length > 0) {
    const [src, dst] = work.pop()!;
    if (Array.isArray(src)) {
      const arr = dst as Value[];
      for (let i = 0; i < src.length; i++) {
        arr[i] = convert(src[i]);
        if (src[i] !== null && typeof src[i] === "object") work.push([src[i], arr[i]]);
      }
    } else if (src !== null && typeof src === "object") {
      const map = dst as Map<string, Value>;
      for (const k of Object.keys(src)) {
        const child = (src as Record<string, unknown>)[k];
        const c = convert(child);
        map.set(k, c);
        if (child !== null && typeof child === "object") work.push([child, c]);
      }
    }
  }
  return out;
}

function levelsOf(format: JsonFormat, state: ResumeState): ResumeLevel[] {
  return state.path.map((step, i) => {
    if (i === 0 && format !== "json") {
      if (typeof step !== "number") staleResume();
      return { kind: KIND_SEQ, index: step, key: "", keyAt: 0 };
    }
    if (typeof step === "number") return { kind: KIND_ARRAY, index: step, key: "", keyAt: 0 };
    return { kind: KIND_OBJECT, index: -1, key: step.key ?? "", keyAt: step.keyAt };
  });
}

/** Reads back member names referenced by offset in a decoded resume state. */
async function resolvePath(
  reader: ByteReader,
  state: ResumeState,
  lim: JsonLimits,
): Promise<ResumeState> {
  const path = [];
  for (const step of state.path) {
    if (typeof step === "number" || step.key !== undefined) {
      path.push(step);
      continue;
    }
    path.push({ keyAt: step.keyAt, key: await readStringAt(reader, step.keyAt, lim) });
  }
  return { ...state, path };
}

async function readStringAt(reader: ByteReader, offset: number, lim: JsonLimits): Promise<string> {
  const parts: Uint8Array[] = [];
  let total = 0;
  let pos = offset;
  let escaped = false;
  let hasEscape = false;
  let hasHigh = false;
  let first = true;
  // Perf: names are short; read a little first, more only for long names.
  let want = 256;
  while (pos < reader.size) {
    const chunk = await reader.read(pos, Math.min(want, reader.size - pos));
    want = Math.min(want * 4, READ_CHUNK_BYTES);
    if (chunk.length === 0) break;
    let i = 0;
    if (first) {
      if (chunk[0] !== QUOTE) staleResume();
      i = 1;
      first = false;
    }
    for (; i < chunk.length; i++) {
      const b = chunk[i];
      if (b >= 0x80) hasHigh = true;
      if (escaped) escaped = false;
      else if (b === BACKSLASH) {
        escaped = true;
        hasEscape = true;
      } else if (b === QUOTE) {
        parts.push(chunk.subarray(0, i + 1));
        total += i + 1;
        const bytes = concat(parts, total);
        return decodeStringContent(bytes, 1, bytes.length - 1, hasEscape, hasHigh);
      }
    }
    parts.push(chunk);
    total += chunk.length;
    pos += chunk.length;
    if (total > lim.maxStringBytes) staleResume();
  }
  staleResume();
}

function staleResume(): never {
  throw new PagewiseError("INVALID_CURSOR", "The resume state does not fit this source", {
    hint: "Run the query again without a cursor.",
  });
}

function cancelled(): PagewiseError {
  return new PagewiseError("CANCELLED", "The request was cancelled before it finished.");
}

/** When the scan started mid-file, recomputes an error's line and column from the file's start. */
async function withAbsoluteLocation(
  e: unknown,
  reader: ByteReader,
  startOffset: number,
): Promise<unknown> {
  if (!(e instanceof PagewiseError) || startOffset === 0) return e;
  const loc = e.details.location as Record<string, unknown> | undefined;
  if (!loc || typeof loc.byte_offset !== "number") return e;
  const target = loc.byte_offset;
  let line = 1;
  let lineStart = 0;
  for (let pos = 0; pos < target; ) {
    const chunk = await reader.read(pos, Math.min(READ_CHUNK_BYTES, target - pos));
    if (chunk.length === 0) break;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] === LF) {
        line++;
        lineStart = pos + i + 1;
      }
    }
    pos += chunk.length;
  }
  loc.line = line;
  loc.column = target - lineStart + 1;
  return e;
}
