/**
 * @module
 * The worker threads of `list` and `search` (see walk-worker.ts): one pool, so that an idle thread
 * left by one tool serves the other instead of each tool keeping its own. They count against the
 * process-wide budget of live worker threads like every pool's.
 */
import { MAX_LIVE_WORKERS, SLOTS_KEPT_FOR_OTHER_CALLERS } from "./limits.js";
import { GuardedWorkers } from "./pattern/index.js";

/** Idle threads kept: as many as may run at once. */
export const walkWorkers = new GuardedWorkers(
  new URL("./walk-worker.js", import.meta.url),
  MAX_LIVE_WORKERS + SLOTS_KEPT_FOR_OTHER_CALLERS,
);
