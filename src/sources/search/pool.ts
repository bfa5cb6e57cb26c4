/**
 * @module
 * Runs search scans in worker threads. A JavaScript regex cannot be interrupted, so a pattern that
 * backtracks catastrophically would freeze the thread running it; in a worker, the server stays
 * responsive and stops the scan when it reports no progress for `stallMs`
 * (RESOURCE_LIMIT_EXCEEDED), or at once when the request is cancelled. Idle workers are kept (at
 * most two) so that a page does not pay the thread start-up each time.
 *
 * Where the compiled worker is missing (tests run on the TypeScript sources), the scan runs
 * in-process instead, without the stall guard.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type ErrorCode, PagewiseError } from "../../core/index.js";
import { runScan, type ScanJob, type ScanResult } from "./scan.js";

/** Milliseconds a search may go without progress before it is stopped (`--search-stall-ms`). */
export const DEFAULT_SEARCH_STALL_MS = 5000;
const MAX_IDLE_WORKERS = 2;

const WORKER_URL = new URL("./worker.js", import.meta.url);
const idle: Worker[] = [];

function workerAvailable(): boolean {
  try {
    return WORKER_URL.protocol === "file:" && existsSync(fileURLToPath(WORKER_URL));
  } catch {
    return false;
  }
}

export interface RunOptions {
  readonly signal?: AbortSignal;
  readonly stallMs?: number;
  readonly onProgress?: (filesRead: number, bytesRead: number) => void;
  /** Force in-process scanning (tests). */
  readonly inProcess?: boolean;
}

export async function runScanJob(job: ScanJob, options: RunOptions = {}): Promise<ScanResult> {
  if (options.inProcess || !workerAvailable()) {
    return runScan(job, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { tick: options.onProgress } : {}),
    });
  }
  options.signal?.throwIfAborted();
  const worker = idle.pop() ?? new Worker(WORKER_URL);
  worker.ref();
  const stallMs = options.stallMs ?? DEFAULT_SEARCH_STALL_MS;
  return new Promise<ScanResult>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      options.signal?.removeEventListener("abort", onAbort);
    };
    const kill = (error: PagewiseError) => {
      cleanup();
      void worker.terminate();
      reject(error);
    };
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(
        () =>
          kill(
            new PagewiseError(
              "RESOURCE_LIMIT_EXCEEDED",
              `The search made no progress for ${stallMs} ms and was stopped: the pattern is too expensive on some line (catastrophic backtracking). Simplify the pattern, pass literal: true, or narrow the search with glob or path.`,
              { limit: { name: "search_stall_ms", limit: stallMs, value: stallMs } },
            ),
          ),
        stallMs,
      );
    };
    const onMessage = (msg: {
      type: string;
      files?: number;
      bytes?: number;
      result?: ScanResult;
      error?: { code: ErrorCode; message: string; details?: Record<string, unknown> };
    }) => {
      if (msg.type === "progress") {
        arm();
        options.onProgress?.(msg.files ?? 0, msg.bytes ?? 0);
        return;
      }
      cleanup();
      worker.unref();
      if (idle.length < MAX_IDLE_WORKERS) idle.push(worker);
      else void worker.terminate();
      if (msg.type === "done") resolve(msg.result!);
      else reject(new PagewiseError(msg.error!.code, msg.error!.message, msg.error!.details ?? {}));
    };
    const onError = (err: Error) => {
      cleanup();
      void worker.terminate();
      reject(new PagewiseError("INTERNAL_ERROR", `Internal error in search: ${err.message}`));
    };
    const onExit = () => {
      cleanup();
      reject(new PagewiseError("INTERNAL_ERROR", "The search worker stopped unexpectedly."));
    };
    const onAbort = () =>
      kill(new PagewiseError("CANCELLED", "The request was cancelled before it finished."));
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    arm();
    worker.postMessage(job);
  });
}
