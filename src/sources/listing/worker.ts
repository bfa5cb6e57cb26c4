/**
 * @module
 * Worker-thread entry of `list` jobs: one job at a time, with progress reports (for the parent's
 * stall guard and the request's progress notifications).
 */
import { serveJobs } from "../pattern/worker-jobs.js";
import { type ListJob, runListJob } from "./collect.js";

serveJobs((job: ListJob, progress) =>
  runListJob(job, { tick: (entries) => progress({ entries }) }),
);
