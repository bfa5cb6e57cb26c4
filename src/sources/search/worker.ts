/**
 * @module
 * Worker-thread entry of the search scan: one job at a time, with progress reports often enough
 * for the parent to tell "slow" from "stuck".
 */
import { serveJobs } from "../pattern/worker-jobs.js";
import { runScan, type ScanJob } from "./scan.js";

serveJobs((job: ScanJob, progress) =>
  runScan(job, { tick: (files, bytes) => progress({ files, bytes }) }),
);
