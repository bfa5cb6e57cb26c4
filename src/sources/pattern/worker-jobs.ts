/**
 * @module
 * The worker side of `GuardedWorkers`: runs the jobs its pool posts, one at a time, and answers
 * each with its result or its error. Progress goes out at most every PROGRESS_EVERY_MS: each report
 * re-arms the parent's stall guard and feeds the request's progress notifications.
 */
import { parentPort } from "node:worker_threads";
import { isPagewiseError } from "../../core/index.js";

const PROGRESS_EVERY_MS = 100;

/** Reports a job's progress (counts such as files or entries read so far); throttled. */
export type ReportProgress = (counts: Record<string, number>) => void;

/** Serves the jobs posted to this worker thread with `run` (does nothing outside a worker). */
export function serveJobs<J, R>(run: (job: J, progress: ReportProgress) => Promise<R> | R): void {
  const port = parentPort;
  if (!port) return;
  port.on("message", async (job: J) => {
    let last = 0;
    const progress: ReportProgress = (counts) => {
      const now = performance.now();
      if (now - last < PROGRESS_EVERY_MS) return;
      last = now;
      port.postMessage({ type: "progress", ...counts });
    };
    try {
      port.postMessage({ type: "done", result: await run(job, progress) });
    } catch (err) {
      const error = isPagewiseError(err)
        ? { code: err.code, message: err.message, details: err.details }
        : { code: "INTERNAL_ERROR", message: `Internal error: ${(err as Error).message}` };
      port.postMessage({ type: "error", error });
    }
  });
}
