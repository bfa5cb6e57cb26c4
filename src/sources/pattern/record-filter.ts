/**
 * @module
 * A pattern as a per-record filter (tail's `grep`). RE2 patterns run in the calling thread (linear
 * time); JavaScript-engine patterns run one record at a time in a guarded worker, so a
 * catastrophic pattern is stopped after `stallMs` instead of freezing the server.
 */
import { GuardedWorkers } from "./guarded-worker.js";
import { type CompiledPattern, lineMatcher } from "./pattern.js";
import type { RegexJob } from "./regex-worker.js";

/** Whether a record's text matches; a promise when the test runs in a worker. */
export type RecordFilter = (text: string) => boolean | Promise<boolean>;

export interface RecordFilterOptions {
  readonly stallMs?: number;
  readonly signal?: AbortSignal;
  /** Test in this thread even for the JavaScript engine (tests on the TypeScript sources). */
  readonly inProcess?: boolean;
}

const regexWorkers = new GuardedWorkers(new URL("./regex-worker.js", import.meta.url), 1);

export function recordFilter(p: CompiledPattern, options: RecordFilterOptions = {}): RecordFilter {
  const matcher = lineMatcher(p);
  const inThread = (text: string): boolean => {
    matcher.lastIndex = 0;
    return matcher.test(text);
  };
  if (p.engine === "re2" || options.inProcess || !regexWorkers.available()) return inThread;
  return async (text) => {
    const job: RegexJob = { source: p.source, flags: p.flags, texts: [text] };
    const [hit] = await regexWorkers.run<boolean[]>(job, {
      ...(options.stallMs !== undefined ? { stallMs: options.stallMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return hit === true;
  };
}
