/**
 * @module
 * The one worker-thread entry of the jobs that walk a tree: `list`'s walks and `search`'s scans.
 * One pool serves both (walk-pool.ts), so the threads kept idle between calls serve whichever
 * tool comes next: two pools kept up to six idle threads, each with a heap of its own. Each kind's
 * modules load on its first job, so a thread that only lists never loads the scanner.
 */
import type { ListJob, ListResult } from "./listing/collect.js";
import { serveJobs } from "./pattern/worker-jobs.js";
import type { ScanJob, ScanResult } from "./search/scan.js";

export type WalkJob =
  | { readonly kind: "list"; readonly job: ListJob }
  | { readonly kind: "scan"; readonly job: ScanJob };

serveJobs<WalkJob, ListResult | ScanResult>(async (walk, progress) => {
  if (walk.kind === "list") {
    const { runListJob } = await import("./listing/collect.js");
    return runListJob(walk.job, { tick: (entries) => progress({ entries }) });
  }
  const { runScan } = await import("./search/scan.js");
  return runScan(walk.job, { tick: (files, bytes) => progress({ files, bytes }) });
});
