/**
 * @module
 * Helpers shared by this folder's tests (not exported from the package).
 */

import { PagewiseError } from "../../core/index.js";
import { DEFAULT_JSON_LIMITS, type JsonLimits } from "../limits.js";
import {
  type JsonFormat,
  KIND_OBJECT,
  T_NUMBER,
  T_STRING,
  Tokenizer,
  type TokenSink,
} from "../tokenizer.js";

export const enc = new TextEncoder();

/** A sink that records every event as a string, with string values and number spellings. */
export class RecordingSink implements TokenSink {
  events: string[] = [];
  constructor(private readonly tok: () => Tokenizer) {}
  open(kind: number, start: number): void {
    this.events.push(`${kind === KIND_OBJECT ? "{" : kind === 2 ? "[" : "seq"}@${start}`);
  }
  close(end: number): void {
    this.events.push(`close@${end}`);
  }
  key(name: string, start: number): void {
    this.events.push(`key ${JSON.stringify(name)}@${start}`);
  }
  scalar(type: number, start: number, end: number): void {
    const t = this.tok();
    const text =
      type === T_STRING
        ? JSON.stringify(t.scalarString())
        : type === T_NUMBER
          ? t.scalarText()
          : String(type);
    this.events.push(`scalar ${text}@${start}-${end}`);
  }
}

export interface TokenizeResult {
  events: string[];
  error?: { code: string; message: string; details: Record<string, unknown> };
}

/** Tokenizes `input` fed in pieces of the given sizes (cycled), recording events or the error. */
export function tokenize(
  format: JsonFormat,
  input: Uint8Array | string,
  pieces: number[] = [],
  limits: Partial<JsonLimits> = {},
): TokenizeResult {
  const bytes = typeof input === "string" ? enc.encode(input) : input;
  let tok: Tokenizer | undefined;
  const sink = new RecordingSink(() => tok!);
  tok = new Tokenizer(format, { ...DEFAULT_JSON_LIMITS, ...limits }, sink);
  tok.wantScalarBytes = true;
  try {
    tok.start();
    if (pieces.length === 0) tok.feed(bytes);
    else {
      let pos = 0;
      let k = 0;
      while (pos < bytes.length) {
        const size = Math.max(1, pieces[k++ % pieces.length]);
        tok.feed(bytes.subarray(pos, pos + size));
        pos += size;
      }
    }
    tok.end();
    return { events: sink.events };
  } catch (e) {
    if (!(e instanceof PagewiseError)) throw e;
    return { events: sink.events, error: { code: e.code, message: e.message, details: e.details } };
  }
}

import { compactJsonText } from "../compact.js";
import { type CompiledQuery, compileQuery, runQuery } from "../query.js";
import { bufferReader } from "../reader.js";
import type { ResumeState } from "../resume.js";

export interface Found {
  pointer: string;
  text: string;
  resume: ResumeState;
}

/** Runs a query over `doc` (text, or a value to JSON.stringify) and returns every match. */
export async function runAll(
  doc: string | Uint8Array,
  query: string | CompiledQuery,
  opts: {
    format?: JsonFormat;
    language?: "pointer" | "jsonpath";
    resume?: ResumeState;
    limits?: Partial<JsonLimits>;
  } = {},
): Promise<Found[]> {
  const bytes = typeof doc === "string" ? enc.encode(doc) : doc;
  const compiled =
    typeof query === "string"
      ? compileQuery(opts.language ?? "jsonpath", query, opts.limits)
      : query;
  const out: Found[] = [];
  for await (const m of runQuery(
    bufferReader(bytes),
    opts.format ?? "json",
    compiled,
    opts.resume,
    opts.limits,
  )) {
    out.push({
      pointer: m.pointer,
      text: compactJsonText(bytes.subarray(m.start, m.end)),
      resume: m.resume,
    });
  }
  return out;
}

/** `pointer=text` lines of every match, for compact assertions. */
export async function matches(
  doc: string | Uint8Array,
  query: string,
  opts: {
    format?: JsonFormat;
    language?: "pointer" | "jsonpath";
    limits?: Partial<JsonLimits>;
  } = {},
): Promise<string[]> {
  return (await runAll(doc, query, opts)).map((f) => `${f.pointer}=${f.text}`);
}
