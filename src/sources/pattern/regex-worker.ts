/**
 * @module
 * Worker-thread entry for JavaScript-engine patterns outside search's scan (tail's `grep`): tests
 * a batch of texts, one answer per text. It runs under the stall guard of guarded-worker.ts.
 */
import { parentPort } from "node:worker_threads";

export interface RegexJob {
  readonly source: string;
  readonly flags: string;
  readonly texts: readonly string[];
}

const port = parentPort;
if (port) {
  port.on("message", (job: RegexJob) => {
    try {
      const re = new RegExp(job.source, job.flags.replace(/[gy]/g, ""));
      const result = job.texts.map((t) => re.test(t));
      port.postMessage({ type: "done", result });
    } catch (err) {
      port.postMessage({
        type: "error",
        error: { code: "INTERNAL_ERROR", message: `Internal error: ${(err as Error).message}` },
      });
    }
  });
}
