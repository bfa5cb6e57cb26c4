/**
 * @module
 * A pattern as a per-record filter (tail's `grep`). `bounded` and `linear` patterns run in the
 * calling thread when the test's work is small (both linear time, but a large weight times a long
 * record adds up: `(a|aa){0,500}z` takes seconds over a MiB), with a turn for the event loop every
 * GREP_YIELD_STEPS; larger tests and `guarded` patterns run one record at a time in a guarded
 * worker (on V8, with JavaScript's meaning), so a catastrophic pattern is stopped after `stallMs`
 * instead of freezing the server.
 */
import { GREP_IN_THREAD_PROGRAM, GREP_IN_THREAD_STEPS, GREP_YIELD_STEPS } from "../limits.js";
import { GuardedWorkers } from "./guarded-worker.js";
import { type CompiledPattern, lineMatcher, type Matcher } from "./pattern.js";
import type { RegexJob } from "./regex-worker.js";

/** Whether a record's text matches; a promise when the test runs in a worker. */
export type RecordFilter = (text: string) => boolean | Promise<boolean>;

export interface RecordFilterOptions {
  readonly stallMs?: number;
  readonly signal?: AbortSignal;
  /** The caller's identity: worker threads are shared fairly between callers. */
  readonly owner?: string;
  /** Test in this thread even for `guarded` patterns (tests on the TypeScript sources). */
  readonly inProcess?: boolean;
}

const regexWorkers = new GuardedWorkers(new URL("./regex-worker.js", import.meta.url), 1);

/** Whether a test of a record `length` long, at `weight` steps a character, runs on the calling thread. */
export function grepsInThread(weight: number, length: number): boolean {
  return weight * (length + 1) <= GREP_IN_THREAD_STEPS;
}

export function recordFilter(p: CompiledPattern, options: RecordFilterOptions = {}): RecordFilter {
  let matcher: Matcher | undefined;
  const test = (text: string): boolean => {
    matcher ??= lineMatcher(p);
    return matcher.test(text);
  };
  const inWorker = async (text: string): Promise<boolean> => {
    const job: RegexJob = { source: p.source, flags: p.flags, texts: [text] };
    const [hit] = await regexWorkers.run<boolean[]>(job, {
      ...(options.stallMs !== undefined ? { stallMs: options.stallMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
    });
    return hit === true;
  };
  const workers = !options.inProcess && regexWorkers.available();
  if (p.engine === "guarded") return workers ? inWorker : test;
  if (workers && p.engine === "linear" && p.weight > GREP_IN_THREAD_PROGRAM) return inWorker;
  const weight = p.weight;
  let sinceTurn = 0;
  return (text) => {
    if (workers && !grepsInThread(weight, text.length)) return inWorker(text);
    sinceTurn += weight * (text.length + 1);
    if (sinceTurn < GREP_YIELD_STEPS) return test(text);
    // The tests so far may have held the thread for a while: a turn for the event loop first.
    sinceTurn = 0;
    return new Promise((resolve, reject) =>
      setImmediate(() => {
        try {
          resolve(test(text));
        } catch (err) {
          reject(err);
        }
      }),
    );
  };
}
