/**
 * @module
 * Worker-thread entry of the search scan: runs one job at a time and reports progress often
 * enough (at least every 100 ms of work) for the parent to tell "slow" from "stuck".
 */
import { parentPort } from "node:worker_threads";
import { isPagewiseError } from "../../core/index.js";
import { runScan, type ScanJob } from "./scan.js";

const port = parentPort;
if (port) {
  port.on("message", async (job: ScanJob) => {
    let last = 0;
    try {
      const result = await runScan(job, {
        tick(files, bytes) {
          const now = performance.now();
          if (now - last < 100) return;
          last = now;
          port.postMessage({ type: "progress", files, bytes });
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
