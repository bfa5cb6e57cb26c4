/**
 * A search of a pattern that backtracks on every line (only V8 runs it, in the guarded worker)
 * makes progress file after file, so the stall guard never fires: the scan's time budget
 * (six stall windows in all) stops it, over stdio, with an error naming the limit.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ServerHandle, startServer, tempDir } from "./support/server.js";

/** Tens of milliseconds of backtracking per line (2^22 ways to split the run of A's). */
const HOSTILE_LINE = `${"A".repeat(22)}B`;
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
    const name = `f${String(i).padStart(3, "0")}.txt`;
    writeFileSync(path.join(tmp.dir, "hostile", name), `${HOSTILE_LINE}\n`.repeat(10));
  }
  writeFileSync(path.join(tmp.dir, "small.txt"), "hay\nneedle\nhay\n");
  server = await startServer(["--root", tmp.dir, ...args]);
  return server;
}

const HOSTILE_FILES = 300;

describe("a guarded search has a time budget per call", () => {
  it("is stopped after six stall windows in all although it makes progress, naming the limit", async () => {
    // The default stall window (5 s): a file takes a tenth of it (35 ms of backtracking per line,
    // ten lines), so only the budget (30 s) stops the scan, before the end of its 300 files (about
    // 100 s of backtracking, 50 s on two threads).
    const s = await setUp(HOSTILE_FILES);
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
    expect(error.limit).toEqual({ name: "search_guarded_ms", limit: 30_000, value: 30_000 });
    expect(filesRead).toBeLessThan(HOSTILE_FILES);
  }, 120_000);
});
