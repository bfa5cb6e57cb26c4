/**
 * @module
 * Worker-thread entry for JavaScript-engine patterns outside search's scan (tail's `grep`): tests
 * a batch of texts, one answer per text. It runs under the stall guard of guarded-worker.ts.
 */
import { serveJobs } from "./worker-jobs.js";

export interface RegexJob {
  readonly source: string;
  readonly flags: string;
  readonly texts: readonly string[];
}

serveJobs((job: RegexJob) => {
  const re = new RegExp(job.source, job.flags.replace(/[gy]/g, ""));
  return job.texts.map((t) => re.test(t));
});
