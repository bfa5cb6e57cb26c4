/**
 * @module
 * Worker-thread entry of `list` jobs: runs one job at a time and reports progress at least every
 * 100 ms of walking (for the parent's stall guard and the request's progress notifications).
 */
import { parentPort } from "node:worker_threads";
import { isPagewiseError } from "../../core/index.js";
import { type ListJob, runListJob } from "./collect.js";

const port = parentPort;
if (port) {
  port.on("message", async (job: ListJob) => {
    let last = 0;
    try {
      const result = await runListJob(job, {
        tick(entries) {
          const now = performance.now();
          if (now - last < 100) return;
          last = now;
          port.postMessage({ type: "progress", entries });
        },
      });
      port.postMessage({ type: "done", result });
    } catch (err) {
      const error = isPagewiseError(err)
        ? { code: err.code, message: err.message, details: err.details }
        : { code: "INTERNAL_ERROR", message: `Internal error: ${(err as Error).message}` };
      port.postMessage({ type: "error", error });
    }
  });
}
