/**
 * Reliability under attack: the real server (over stdio, and over HTTP with two identities) is fed
 * hostile trees and hostile arguments on purpose, and must keep answering everyone, stay within its
 * memory, never exit, and never answer wrong.
 *
 * How "never stalls" is checked without timing anything: while the attack call is in flight, a tiny
 * `read` is sent and must come back, and the server process must still be alive. The attacks are
 * chosen so that a server doing the work on its request thread would need minutes to years
 * (exponential backtracking, a FIFO that never delivers, an endless file): such a server fails the
 * test by its timeout, never by a measured duration. Memory is the process's peak resident set
 * (VmHWM in /proc/PID/status), so no sampling can miss a spike.
 *
 * Every server, helper process, FIFO and temporary directory a test makes is removed by that test.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  isRunning,
  killHard,
  postRpc,
  processMemory,
  serverPid,
  startChurner,
  startHttpServer,
  toolCall,
  toolOutcome,
} from "./support/attack.js";
import { type ServerHandle, startServer, type ToolOutcome, tempDir } from "./support/server.js";

/** The bound within which a stalled server fails an attack test. */
const ATTACK_TEST_TIMEOUT_MS = 20_000;
/** The contract's memory ceiling, whatever the input. */
const PEAK_RSS_CEILING_KIB = 200 * 1024;
const TINY = "tiny.txt";
const TINY_TEXT = "tiny\n";

interface Served {
  server: ServerHandle;
  pid: number;
  dir: string;
}

/**
 * A fresh root (on /dev/shm where there is one) laid out by `setup`, served over stdio; the
 * server, the root and anything `setup` registered for removal are gone when `body` ends.
 */
async function withServer(
  setup: (dir: string, removeLater: (p: string) => void) => void,
  body: (s: Served) => Promise<void>,
  extraArgs: string[] = [],
): Promise<void> {
  const { dir, cleanup } = tempDir("pagewise-reliability-", { inMemory: true });
  const extra: string[] = [];
  let served: Served | undefined;
  try {
    writeFileSync(path.join(dir, TINY), TINY_TEXT);
    setup(dir, (p) => extra.push(p));
    const server = await startServer(["--root", dir, ...extraArgs]);
    served = { server, pid: serverPid(dir), dir };
    await body(served);
  } finally {
    if (served) {
      killHard(served.pid);
      await served.server.close().catch(() => undefined);
    }
    for (const p of extra) rmSync(p, { recursive: true, force: true });
    cleanup();
  }
}

/** The tiny read that must be answered while an attack is in flight. */
async function expectTinyReadAnswered(server: ServerHandle): Promise<void> {
  const tiny = await server.call("read", { path: TINY, max_tokens: 200 });
  expect(tiny.isError, tiny.text).toBe(false);
  expect(tiny.json.content).toBe(TINY_TEXT);
}

/**
 * Runs the attack calls, and while they are in flight the tiny read; then every attack outcome,
 * in order. The server must still run afterwards, under the memory ceiling.
 */
async function underAttack(s: Served, attacks: Array<() => Promise<ToolOutcome>>) {
  const inFlight = attacks.map((attack) => settled(attack()));
  await expectTinyReadAnswered(s.server);
  const outcomes = await Promise.all(inFlight);
  expect(isRunning(s.pid)).toBe(true);
  await expectTinyReadAnswered(s.server);
  expect(processMemory(s.pid).peakKiB).toBeLessThanOrEqual(PEAK_RSS_CEILING_KIB);
  return outcomes;
}

/**
 * A call that never rejects: a client-side failure (the connection closed when a stalled server
 * is killed at the end of its test) becomes an outcome that fails `expectStructured`.
 */
function settled(call: Promise<ToolOutcome>): Promise<ToolOutcome> {
  return call.catch((err: unknown) => ({
    text: `client: ${String(err)}`,
    isError: true,
    json: { error: { code: "NO_ANSWER", message: String(err) } },
    blocks: 0,
    structured: undefined,
  }));
}

/** An error is a structured one of the contract's codes, and never INTERNAL_ERROR. */
function expectStructured(out: { isError: boolean; json: any; text?: string }, allowed?: string[]) {
  if (!out.isError) return;
  const code = out.json?.error?.code;
  expect(code, out.text).toBeTypeOf("string");
  expect(code, out.text).not.toBe("INTERNAL_ERROR");
  if (allowed) expect(allowed, out.text).toContain(code);
}

/** Writes `mib` MiB made of `line` repeated, a MiB at a time. */
function writeLarge(file: string, line: string, mib: number): void {
  const chunk = Buffer.from(line.repeat(Math.ceil((1 << 20) / line.length))).subarray(0, 1 << 20);
  const fd = openSync(file, "w");
  try {
    for (let i = 0; i < mib; i++) writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

function mkfifo(file: string): void {
  execFileSync("mkfifo", [file]);
}

/** A tree with a file named in a `.gitignore` kept outside it, and a needle to search for. */
function ignoredTree(dir: string): void {
  mkdirSync(path.join(dir, "sub"));
  writeFileSync(path.join(dir, "visible.txt"), "needle one\n");
  writeFileSync(path.join(dir, "sub", "visible.txt"), "needle two\n");
}

const HOSTILE_GITIGNORES: Array<{
  kind: string;
  make: (dir: string, removeLater: (p: string) => void) => void;
}> = [
  {
    kind: "a symlink to /dev/zero",
    make: (dir) => {
      symlinkSync("/dev/zero", path.join(dir, ".gitignore"));
      symlinkSync("/dev/zero", path.join(dir, "sub", ".gitignore"));
    },
  },
  {
    kind: "a symlink to a file outside the root (its lines must never apply)",
    make: (dir, removeLater) => {
      const outside = `${dir}-outside`;
      mkdirSync(outside);
      removeLater(outside);
      writeFileSync(path.join(outside, "rules"), "visible.txt\n*.txt\nsub\n");
      symlinkSync(path.join(outside, "rules"), path.join(dir, ".gitignore"));
      symlinkSync(path.join(outside, "rules"), path.join(dir, "sub", ".gitignore"));
    },
  },
  {
    kind: "a FIFO nobody writes to",
    make: (dir) => {
      mkfifo(path.join(dir, ".gitignore"));
      mkfifo(path.join(dir, "sub", ".gitignore"));
    },
  },
  {
    kind: "a 64 MiB file of rules",
    make: (dir) => writeLarge(path.join(dir, ".gitignore"), "build-*/**/cache-?[0-9]*.tmp\n", 64),
  },
];

describe("hostile .gitignore files", () => {
  for (const { kind, make } of HOSTILE_GITIGNORES) {
    it(
      `${kind}: list and search answer, other calls too, and nothing outside applies`,
      async () => {
        await withServer(
          (dir, removeLater) => {
            ignoredTree(dir);
            make(dir, removeLater);
          },
          async (s) => {
            // More list calls than libuv has pool threads: a blocking read would take them all.
            const lists = Array.from(
              { length: 6 },
              () => () => s.server.call("list", { recursive: true, max_tokens: 4000 }),
            );
            const searches = Array.from(
              { length: 2 },
              () => () => s.server.call("search", { pattern: "needle", max_tokens: 4000 }),
            );
            const outcomes = await underAttack(s, [...lists, ...searches]);
            for (const out of outcomes.slice(0, lists.length)) {
              expectStructured(out);
              if (out.isError) continue;
              const paths = out.json.items.map((i: { path: string }) => i.path);
              expect(paths).toEqual(expect.arrayContaining(["visible.txt", "sub/visible.txt"]));
            }
            for (const out of outcomes.slice(lists.length)) {
              expectStructured(out);
              if (out.isError) continue;
              expect(out.json.pagination.total).toBe(2);
            }
          },
        );
      },
      ATTACK_TEST_TIMEOUT_MS,
    );
  }
});

/** A line on which `(a+)+$`-style patterns backtrack exponentially: 2^40 steps. */
const EVIL_LINE = `${"a".repeat(40)}b`;

describe("patterns that backtrack exponentially, in every argument that takes one", () => {
  const cases: Array<{ name: string; call: (s: ServerHandle) => Promise<ToolOutcome> }> = [
    {
      name: "search pattern",
      call: (s) => s.call("search", { pattern: "(a+)+$", max_tokens: 2000 }),
    },
    {
      name: "search pattern, case-insensitive",
      call: (s) => s.call("search", { pattern: "(a|aa)+$", case_sensitive: false }),
    },
    {
      name: "tail grep",
      call: (s) => s.call("tail", { path: "evil.log", grep: "(a+)+$", max_tokens: 2000 }),
    },
    {
      name: "tail grep from the start",
      call: (s) =>
        s.call("tail", { path: "evil.log", grep: "(a|a)+$", from_start: true, max_tokens: 2000 }),
    },
    {
      name: "JSONPath match()",
      call: (s) =>
        s.call("json_read", {
          path: "evil.json",
          language: "jsonpath",
          query: "$[?match(@, '(a+)+')]",
        }),
    },
    {
      name: "JSONPath search()",
      call: (s) =>
        s.call("json_read", {
          path: "evil.json",
          language: "jsonpath",
          query: "$[?search(@, '(a+)+$')]",
        }),
    },
    {
      name: "list glob with many stars (polynomial backtracking over a long name)",
      call: (s) =>
        s.call("list", { recursive: true, glob: `${"*a".repeat(14)}*b`, max_tokens: 2000 }),
    },
    {
      name: "search glob with many stars",
      call: (s) => s.call("search", { pattern: "zzz", glob: `${"*a".repeat(14)}*b` }),
    },
  ];
  for (const { name, call } of cases) {
    it(
      `${name}: other calls are answered, and the answer is right or a structured refusal`,
      async () => {
        await withServer(
          (dir) => {
            writeFileSync(path.join(dir, "evil.log"), `start\n${EVIL_LINE}\n`);
            writeFileSync(path.join(dir, "evil.json"), JSON.stringify([EVIL_LINE, "ab"]));
            writeFileSync(path.join(dir, "a".repeat(200)), "x\n");
          },
          async (s) => {
            const [out] = await underAttack(s, [() => call(s.server)]);
            expectStructured(out!, ["INVALID_ARGUMENT", "RESOURCE_LIMIT_EXCEEDED", "CANCELLED"]);
            if (out!.isError) return;
            const items = out!.json.items;
            // None of these patterns matches anything in the tree.
            expect(items.length, out!.text).toBe(0);
          },
        );
      },
      ATTACK_TEST_TIMEOUT_MS,
    );
  }
});

/** Every whole-number argument of every tool, and whether a larger value may be lowered. */
const NUMERIC_ARGUMENTS: Array<{
  tool: string;
  base: Record<string, unknown>;
  arg: string;
  lowered?: boolean;
}> = [
  { tool: "read", base: { path: "lines.txt", max_tokens: 200 }, arg: "offset" },
  { tool: "read", base: { path: "lines.txt", max_tokens: 200 }, arg: "limit" },
  { tool: "read", base: { path: "lines.txt" }, arg: "max_tokens", lowered: true },
  { tool: "list", base: { max_tokens: 200 }, arg: "limit", lowered: true },
  { tool: "list", base: { max_tokens: 200 }, arg: "offset" },
  { tool: "list", base: {}, arg: "max_tokens", lowered: true },
  { tool: "search", base: { pattern: "match", max_tokens: 300 }, arg: "context" },
  { tool: "search", base: { pattern: "match", max_tokens: 300 }, arg: "max_chars_per_match" },
  { tool: "search", base: { pattern: "match", max_tokens: 300 }, arg: "limit", lowered: true },
  { tool: "search", base: { pattern: "match", max_tokens: 300 }, arg: "offset" },
  { tool: "search", base: { pattern: "match" }, arg: "max_tokens", lowered: true },
  { tool: "tail", base: { path: "lines.txt", max_tokens: 300 }, arg: "limit", lowered: true },
  { tool: "tail", base: { path: "lines.txt" }, arg: "max_tokens", lowered: true },
  { tool: "tail", base: { path: "lines.txt", max_tokens: 300 }, arg: "max_chars_per_item" },
  {
    tool: "json_read",
    base: { path: "items.json", language: "jsonpath", query: "$[*]", max_tokens: 300 },
    arg: "max_items",
    lowered: true,
  },
  {
    tool: "json_read",
    base: { path: "items.json", language: "jsonpath", query: "$[*]" },
    arg: "max_tokens",
    lowered: true,
  },
  { tool: "json_open", base: { path: "items.json" }, arg: "max_tokens", lowered: true },
];

/** The continuation argument of a page, to follow it once. */
function continuation(tool: string, page: any): Record<string, unknown> | undefined {
  if (tool === "tail") return page.earlier_cursor ? { before: page.earlier_cursor } : undefined;
  return page.next_cursor ? { cursor: page.next_cursor } : undefined;
}

describe("out-of-range numbers in every numeric argument", () => {
  it(
    "are INVALID_ARGUMENT naming the argument (or lowered, where the contract lowers), never INTERNAL_ERROR",
    async () => {
      await withServer(
        (dir) => {
          const lines = Array.from(
            { length: 300 },
            (_, i) => `line ${i} match ${"x".repeat(i % 50)}`,
          );
          writeFileSync(path.join(dir, "lines.txt"), `${lines.join("\n")}\n`);
          writeFileSync(path.join(dir, "long.txt"), `match ${"y".repeat(5000)}\n`.repeat(20));
          writeFileSync(
            path.join(dir, "items.json"),
            JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ i }))),
          );
        },
        async (s) => {
          // Every wrong answer is collected, so one run names them all.
          const wrong: string[] = [];
          for (const { tool, base, arg, lowered } of NUMERIC_ARGUMENTS) {
            for (const value of [1e21, 2 ** 53 + 2, 1e308, -1, 1.5]) {
              const where = `${tool} ${arg}=${value}`;
              const out = await s.server.call(tool, { ...base, [arg]: value });
              const huge = value > Number.MAX_SAFE_INTEGER;
              if (!out.isError) {
                // Beyond 2^53 only a budget or a page size may be accepted (lowered to its cap).
                if (!(huge && lowered)) wrong.push(`${where}: accepted`);
                const next = continuation(tool, out.json);
                const after = next ? await s.server.call(tool, next) : undefined;
                if (after?.isError && after.json?.error?.code === "INTERNAL_ERROR")
                  wrong.push(`${where}, next page: ${after.text}`);
                continue;
              }
              const error = out.json?.error;
              if (error?.code !== "INVALID_ARGUMENT" || !String(error.message).includes(arg))
                wrong.push(`${where}: ${out.text}`);
            }
          }
          expect(wrong).toEqual([]);
          expect(isRunning(s.pid)).toBe(true);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );
});
