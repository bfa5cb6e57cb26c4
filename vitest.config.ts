import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files run two at a time, longest first, so that no slow file starts last. Vitest orders by the
 * durations of the previous run when its results cache has them, and otherwise by file size; the
 * end-to-end files (spawned servers, npm installs) and the property tests (thousands of calls) are
 * short files with long runs, so they go first whatever the cache says.
 */
class LongRunsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const runsLong = (spec: TestSpecification) => /\.(e2e|property)\.test\.ts$/.test(spec.moduleId);
    return [...sorted.filter(runsLong), ...sorted.filter((spec) => !runsLong(spec))];
  }
}

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default on two cores is one worker; most files wait on child processes and I/O.
    maxWorkers: 2,
    // A worker runs its files one after another in one process, importing vitest, the SDK and
    // the sources once instead of once per file (no test relies on a fresh process: servers
    // under test run in processes of their own, or in process from objects each file creates).
    isolate: false,
    sequence: { sequencer: LongRunsFirst },
  },
});
