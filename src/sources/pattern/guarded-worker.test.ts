/**
 * The guard's limits on a worker thread: a job that outgrows its heap ends with a structured
 * RESOURCE_LIMIT_EXCEEDED (the thread is stopped, the process goes on), never INTERNAL_ERROR.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { GuardedWorkers } from "./guarded-worker.js";
import { Slots } from "./slots.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "pagewise-guarded-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A worker that answers `small` jobs and holds on to memory without end for any other. */
const WORKER = `
import { parentPort } from "node:worker_threads";
parentPort.on("message", (job) => {
  if (job === "small") {
    parentPort.postMessage({ type: "done", result: "ok" });
    return;
  }
  if (job === "late") {
    // Answers, then fails while idle in the pool.
    parentPort.postMessage({ type: "done", result: "answered" });
    setTimeout(() => {
      throw new Error("after the job");
    }, 20);
    return;
  }
  const held = [];
  for (;;) held.push(new Array(100_000).fill(held.length));
});
`;

describe("GuardedWorkers", () => {
  it("ends a job that outgrows the worker's heap with RESOURCE_LIMIT_EXCEEDED, and serves on", async () => {
    const file = path.join(dir, "hog.mjs");
    writeFileSync(file, WORKER);
    const workers = new GuardedWorkers(pathToFileURL(file), 1, new Slots(2), 32);
    await expect(workers.run("hog", { stallMs: 60_000 })).rejects.toMatchObject({
      code: "RESOURCE_LIMIT_EXCEEDED",
      details: { limit: { name: "worker_heap_mb", limit: 32 } },
    });
    await expect(workers.run("small")).resolves.toBe("ok");
  }, 30_000);

  it("drops a thread that fails while idle, instead of ending the process", async () => {
    const file = path.join(dir, "late.mjs");
    writeFileSync(file, WORKER);
    const workers = new GuardedWorkers(pathToFileURL(file), 1, new Slots(2));
    await expect(workers.run("late")).resolves.toBe("answered");
    // Its error comes while it waits in the pool; the process (this test) goes on.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(workers.run("small")).resolves.toBe("ok");
  });
});
