/**
 * One call's slow search does not starve another's, over stdio: while searches of a pattern that
 * backtracks for seconds on every line (only V8 runs it, in the guarded worker) are in flight, a
 * literal search of a small file is answered first. Measured by the order in which the calls
 * settle, not by timing them; the hostile searches are never waited for (the server is killed).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ServerHandle, startServer, tempDir } from "./support/server.js";

/** Seconds of backtracking per line (2^24 ways to split the run of A's), a few per file. */
const HOSTILE_LINE = `${"A".repeat(24)}B`;
const HOSTILE_PATTERN = "(?=A)(A+)+$";

let server: ServerHandle | undefined;
let cleanup: (() => void) | undefined;

afterEach(async () => {
  if (server?.pid !== undefined) {
    try {
      process.kill(server.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  await server?.close().catch(() => {});
  server = undefined;
  cleanup?.();
});

async function setUp(files: number): Promise<ServerHandle> {
  const tmp = tempDir("pagewise-fairness-");
  cleanup = tmp.cleanup;
  mkdirSync(path.join(tmp.dir, "hostile"));
  for (let i = 0; i < files; i++) {
    const name = `f${String(i).padStart(2, "0")}.txt`;
    writeFileSync(path.join(tmp.dir, "hostile", name), `${HOSTILE_LINE}\n`.repeat(3));
  }
  writeFileSync(path.join(tmp.dir, "small.txt"), "hay\nneedle\nhay\n");
  server = await startServer(["--root", tmp.dir]);
  return server;
}

const HOSTILE_FILES = 60;

describe("a slow search does not starve the others", () => {
  it.each([1, 3])(
    "a literal search finishes while %i hostile search(es) of the same caller run",
    async (hostileCalls) => {
      const s = await setUp(HOSTILE_FILES);
      const settled: string[] = [];
      // Files the hostile searches have read so far (their progress notifications), all together.
      const read = new Array<number>(hostileCalls).fill(0);
      const filesRead = () => read.reduce((a, b) => a + b, 0);
      let started!: () => void;
      const first = new Promise<void>((resolve) => {
        started = resolve;
      });
      for (let i = 0; i < hostileCalls; i++) {
        const done = () => {
          settled.push(`hostile${i}`);
          started(); // an early end fails the order check below instead of hanging the test
        };
        s.client
          .callTool(
            { name: "search", arguments: { pattern: HOSTILE_PATTERN, path: "hostile" } },
            {
              onprogress: (p) => {
                read[i] = p.progress;
                started();
              },
              timeout: 120_000,
            },
          )
          .then(done, done);
      }
      // A hostile scan is under way (it has read a file) before the cheap search is sent.
      await first;
      const cheap = await s.call("search", { pattern: "needle", literal: true, path: "small.txt" });
      settled.push("cheap");
      const readMeanwhile = filesRead();
      expect(cheap.isError, cheap.text).toBe(false);
      expect(cheap.json.pagination.total).toBe(1);
      // Answered while every hostile search was still running, early in their work: waiting for a
      // hostile search's threads means waiting for most of its files.
      expect(settled).toEqual(["cheap"]);
      expect(readMeanwhile).toBeLessThan(HOSTILE_FILES / 2);
    },
    120_000,
  );
});
