/**
 * A search of a pattern that backtracks for a second on every line (only V8 runs it, in the guarded
 * worker) makes progress file after file, so the stall guard never fires: the scan's time budget
 * (six stall windows in all) stops it, over stdio, with an error naming the limit.
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

async function setUp(files: number, args: string[] = []): Promise<ServerHandle> {
  const tmp = tempDir("pagewise-guarded-");
  cleanup = tmp.cleanup;
  mkdirSync(path.join(tmp.dir, "hostile"));
  for (let i = 0; i < files; i++) {
    const name = `f${String(i).padStart(2, "0")}.txt`;
    writeFileSync(path.join(tmp.dir, "hostile", name), `${HOSTILE_LINE}\n`.repeat(3));
  }
  writeFileSync(path.join(tmp.dir, "small.txt"), "hay\nneedle\nhay\n");
  server = await startServer(["--root", tmp.dir, ...args]);
  return server;
}

const HOSTILE_FILES = 120;

describe("a guarded search has a time budget per call", () => {
  it("is stopped after six stall windows in all although it makes progress, naming the limit", async () => {
    // Two seconds of stall window: every file takes a fraction of it, so only the budget (12 s)
    // stops the scan, before the end of its 120 files (about 28 s of backtracking on two threads).
    const s = await setUp(HOSTILE_FILES, ["--search-stall-ms", "2000"]);
    let filesRead = 0;
    const result = await s.client.callTool(
      { name: "search", arguments: { pattern: HOSTILE_PATTERN, path: "hostile" } },
      {
        onprogress: (p) => {
          filesRead = p.progress;
        },
        timeout: 120_000,
      },
    );
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    expect(result.isError, text).toBe(true);
    const error = JSON.parse(text).error;
    expect(error.code).toBe("RESOURCE_LIMIT_EXCEEDED");
    expect(error.limit).toEqual({ name: "search_guarded_ms", limit: 12_000, value: 12_000 });
    expect(filesRead).toBeLessThan(HOSTILE_FILES);
  }, 120_000);
});
