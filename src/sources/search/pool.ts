/**
 * @module
 * Runs search scans in worker threads under the stall guard (see pattern/guarded-worker.ts): a
 * JavaScript-engine pattern that backtracks catastrophically is stopped, not waited for. At most
 * two idle workers are kept so that a page does not pay the thread start-up each time.
 *
 * Where the compiled worker is missing (tests run on the TypeScript sources), the scan runs
 * in-process instead, without the stall guard.
 */
import { DEFAULT_STALL_MS, GuardedWorkers } from "../pattern/index.js";
import { runScan, type ScanJob, type ScanResult } from "./scan.js";

/** Milliseconds a search may go without progress before it is stopped (`--search-stall-ms`). */
export const DEFAULT_SEARCH_STALL_MS = DEFAULT_STALL_MS;
const MAX_IDLE_WORKERS = 2;

const workers = new GuardedWorkers(new URL("./worker.js", import.meta.url), MAX_IDLE_WORKERS);

export interface RunOptions {
  readonly signal?: AbortSignal;
  readonly stallMs?: number;
  readonly onProgress?: (filesRead: number, bytesRead: number) => void;
  /** Force in-process scanning (tests). */
  readonly inProcess?: boolean;
}

export async function runScanJob(job: ScanJob, options: RunOptions = {}): Promise<ScanResult> {
  if (options.inProcess || !workers.available()) {
    return runScan(job, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { tick: options.onProgress } : {}),
    });
  }
  const { onProgress } = options;
  return workers.run<ScanResult>(job, {
    ...(options.signal ? { signal: options.signal } : {}),
    stallMs: options.stallMs ?? DEFAULT_SEARCH_STALL_MS,
    ...(onProgress
      ? { onProgress: (msg) => onProgress(Number(msg.files ?? 0), Number(msg.bytes ?? 0)) }
      : {}),
  });
}
