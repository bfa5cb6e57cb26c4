/**
 * `read` against a file rewritten while a call reads it, at a chosen moment: the file's reads are
 * intercepted, so the rewrite lands inside the line scan every time (no timing involved).
 */
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { Descriptor } from "../../access/descriptor.js";
import { runSource } from "../../core/index.js";
import { tempSourceContext } from "../shared/test-support/context.js";
import { createReadSource, readLines } from "./read-text.js";

const { dir, ctx, cleanup } = tempSourceContext("pagewise-read-text-");
afterAll(cleanup);
afterEach(() => vi.restoreAllMocks());

const LINES = 300_000;
/** Numbered lines of different lengths, so that another order moves every line end. */
const lines = Array.from(
  { length: LINES },
  (_, i) => `A${String(i).padStart(7, "0")} ${"x".repeat((i * 7) % 53)}\n`,
);
const original = Buffer.from(lines.join(""));
const reversed = Buffer.from([...lines].reverse().join(""));
const OFFSET = 271_738;

function overwrite(file: string, bytes: Buffer): void {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Overwrites `file` with `bytes` once, just before the first read at or past `position` made while
 * a line is looked for (findLineStart), as a writer racing that scan would.
 */
function rewriteDuringLineScan(file: string, bytes: Buffer, position: number): () => boolean {
  let done = false;
  const read = Descriptor.prototype.read;
  vi.spyOn(Descriptor.prototype, "read").mockImplementation(function (
    this: Descriptor,
    buffer,
    offset,
    length,
    at,
  ) {
    if (!done && at >= position && new Error().stack?.includes("findLineStart")) {
      done = true;
      overwrite(file, bytes);
    }
    return read.call(this, buffer, offset, length, at);
  });
  return () => done;
}

const source = createReadSource({ name: "max_tokens", default: 8000, max: 25_000 });
const run = { codec: ctx.codec, identity: ctx.caller.identity, context: ctx };

async function page(args: { path: string; offset: number; limit: number }) {
  try {
    return JSON.parse(await runSource(source, run, args, undefined, { max_tokens: 600 }));
  } catch (e) {
    return { error: (e as { code?: string }).code };
  }
}

/** Lines `offset` and `offset + 1` of `bytes`. */
function linesAt(bytes: Buffer, offset: number): string {
  const lines = bytes
    .toString()
    .split("\n")
    .slice(offset, offset + 2);
  return `${lines.join("\n")}\n`;
}

describe("line checkpoints learned while the file changed", () => {
  it("never outlive the call that saw the change (page mode)", async () => {
    const file = path.join(dir, "numbered.txt");
    writeFileSync(file, original);
    const args = { path: "numbered.txt", offset: OFFSET, limit: 2 };
    const rewritten = rewriteDuringLineScan(file, reversed, 8 << 20);
    const during = await page(args);
    expect(rewritten()).toBe(true);
    // One version or the other, or CONTENT_CHANGED: never lines of both.
    if (during.error === undefined) expect(during.content).toBe(linesAt(reversed, OFFSET));
    else expect(during.error).toBe("CONTENT_CHANGED");
    vi.restoreAllMocks();
    overwrite(file, original);
    const after = await page(args);
    expect(after.content).toBe(linesAt(original, OFFSET));
    expect(after.position.line).toBe(OFFSET + 1);
  });

  it("never outlive the call that saw the change (line mode)", async () => {
    const file = path.join(dir, "numbered-lines.txt");
    writeFileSync(file, original);
    const request = {
      path: "numbered-lines.txt",
      offset: OFFSET,
      limit: 2,
      maxReadTokens: 25_000,
    };
    const rewritten = rewriteDuringLineScan(file, reversed, 8 << 20);
    const during = await readLines(ctx, request).catch((e: { code?: string }) => e.code);
    expect(rewritten()).toBe(true);
    expect([linesAt(reversed, OFFSET), "CONTENT_CHANGED"]).toContain(during);
    vi.restoreAllMocks();
    overwrite(file, original);
    expect(await readLines(ctx, request)).toBe(linesAt(original, OFFSET));
  });
});
