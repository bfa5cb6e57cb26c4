/**
 * A swap race for tests: a worker thread that, until stopped, swaps `dir/sub` (a directory) with
 * `dir/link` (a symlink to a directory elsewhere) by renames, as fast as it can, so the walked
 * tree's `sub` is now and then the outside directory.
 */
import { Worker } from "node:worker_threads";

export interface SwapRace {
  /** Completed swap cycles so far. */
  swaps(): number;
  stop(): Promise<void>;
}

export function startSwapRace(dir: string): SwapRace {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const swaps = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { renameSync } = require("node:fs");
     const { workerData: { dir, stop, swaps } } = require("node:worker_threads");
     const p = (n) => dir + "/" + n;
     while (Atomics.load(stop, 0) === 0) {
       renameSync(p("sub"), p("held"));
       renameSync(p("link"), p("sub"));
       renameSync(p("sub"), p("link"));
       renameSync(p("held"), p("sub"));
       Atomics.add(swaps, 0, 1);
     }`,
    { eval: true, workerData: { dir, stop, swaps } },
  );
  return {
    swaps: () => Atomics.load(swaps, 0),
    async stop() {
      Atomics.store(stop, 0, 1);
      await worker.terminate();
    },
  };
}
