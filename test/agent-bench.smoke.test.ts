/**
 * The agent benchmark (`npm run bench:agent`, bench/agent/) on small data, one task per server, so
 * that it cannot rot: data generation, the servers' start-up, the measured SDK client, each
 * server's call sequence, the answer check and the report all run. Counts are checked, never times.
 *
 * DesktopCommander is not a dependency of this package: the benchmark installs it into
 * `.bench-data/peers/` (a minute of downloads). This test uses that install when it is there and
 * skips DesktopCommander otherwise, unless BENCH_AGENT_INSTALL_PEERS=1 lets it install.
 */
import { describe, expect, it } from "vitest";
import { renderReport } from "../bench/agent/report.js";
import { prepareTask, runPair } from "../bench/agent/run.js";
import { ensureDesktopCommander } from "../bench/agent/servers.js";
import { TASKS } from "../bench/agent/tasks.js";

const SMOKE_PAIRS = [
  { task: "long-line", server: "pagewise" },
  { task: "log-last-errors", server: "filesystem" },
  { task: "orders-field", server: "desktopCommander" },
] as const;

const dc = ensureDesktopCommander({ install: process.env.BENCH_AGENT_INSTALL_PEERS === "1" });
const quiet = () => {};

describe("bench:agent smoke (small data, one task per server)", () => {
  const results: any[] = [];

  for (const pair of SMOKE_PAIRS) {
    const skip = pair.server === "desktopCommander" && !dc.ok;
    it.skipIf(skip)(
      `${pair.task} on ${pair.server}${skip ? ` (skipped: ${dc.reason})` : ""}`,
      async () => {
        const task = TASKS.find((t) => t.id === pair.task)!;
        const prepared = await prepareTask(task, "smoke");
        const record: any = await runPair(task, pair.server, prepared, { dc, onProgress: quiet });
        results.push(record);
        expect(record.error).toBeUndefined();
        expect(record.correct).toBe(true);
        expect(record.calls.length).toBeGreaterThan(0);
        for (const call of record.calls) {
          expect(call.o200k).toBeGreaterThan(0);
          expect(call.claude).toBeGreaterThan(0);
          expect(["shown", "diverted", "refused"]).toContain(call.verdict);
        }
        expect(Number.isFinite(record.cpuMs)).toBe(true);
        if (pair.server === "pagewise") {
          // Pages are meant to fit what Claude Code shows inline.
          expect(record.calls.every((c: any) => c.verdict === "shown")).toBe(true);
        }
      },
      180_000,
    );
  }

  it("renders the report and the chart from the results", () => {
    const meta = {
      date: "2026-01-01",
      build: "test",
      node: process.version,
      cpus: 2,
      loadStart: ["0", "0", "0"],
      loadEnd: ["0", "0", "0"],
      versions: {},
      desktopCommander: dc,
      reps: 1,
    };
    const report = renderReport({ results, meta, tasks: TASKS });
    expect(report.svg.startsWith("<svg")).toBe(true);
    const labels: Record<string, string> = {
      pagewise: "pagewise",
      filesystem: "server-filesystem",
      desktopCommander: "DesktopCommander",
    };
    for (const r of results) expect(report.markdown).toContain(`| ${labels[r.server]} |`);
  });
});
