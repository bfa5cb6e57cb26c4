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
 * Every server, helper process, FIFO and temporary directory a test makes is removed by that test,
 * or, for a server the tests of one describe block share, when the block ends.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  isRunning,
  killHard,
  postRpc,
  processMemory,
  releaseAll,
  releaseAtTestEnd,
  serverPid,
  startChurner,
  startHttpServer,
  toolCall,
  toolOutcome,
} from "./support/attack.js";
import {
  bytesRead,
  type ServerHandle,
  startServer,
  type ToolOutcome,
  tempDir,
} from "./support/server.js";

/** The bound within which a stalled server fails an attack test. */
const ATTACK_TEST_TIMEOUT_MS = 60_000;
/** The contract's memory ceiling, whatever the input. */
const PEAK_RSS_CEILING_KIB = 200 * 1024;
const TINY = "tiny.txt";
const TINY_TEXT = "tiny\n";

// Whatever a test started is released when it ends, even when it ends by its timeout.
afterEach(releaseAll);

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
  let server: ServerHandle | undefined;
  let pid: number | undefined;
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    if (pid !== undefined) killHard(pid);
    await server?.close().catch(() => undefined);
    for (const p of extra) rmSync(p, { recursive: true, force: true });
    cleanup();
  };
  releaseAtTestEnd(release);
  try {
    writeFileSync(path.join(dir, TINY), TINY_TEXT);
    setup(dir, (p) => extra.push(p));
    server = await startServer(["--root", dir, ...extraArgs]);
    pid = serverPid(dir);
    await body({ server, pid, dir });
  } finally {
    await release();
  }
}

/**
 * One server for the tests of a describe block, run one after another: starting a server process
 * costs about a second of CPU, more than most of these tests. Each test lays out what it needs in
 * the shared root; one that walks the tree and counts what it finds walks a directory of its own.
 * The peak memory an attack checks is then the peak of the block's attacks so far, a check at
 * least as strict. A test that fails, or ends by its timeout, takes the server down with it, so
 * the next test starts a fresh one and a stalled server never fails a test it was not stalled by.
 */
function sharedServer() {
  let current: Promise<Served> | undefined;
  let stopCurrent: (() => Promise<void>) | undefined;
  const start = async (): Promise<Served> => {
    const { dir, cleanup } = tempDir("pagewise-reliability-", { inMemory: true });
    let server: ServerHandle | undefined;
    let pid: number | undefined;
    stopCurrent = async () => {
      current = undefined;
      stopCurrent = undefined;
      if (pid !== undefined) killHard(pid);
      await server?.close().catch(() => undefined);
      cleanup();
    };
    writeFileSync(path.join(dir, TINY), TINY_TEXT);
    server = await startServer(["--root", dir]);
    pid = serverPid(dir);
    return { server, pid, dir };
  };
  const stop = async () => stopCurrent?.();
  afterAll(stop);
  /** Like `withServer`, on the shared server; `dir` is the shared root. */
  return async (
    setup: (dir: string, removeLater: (p: string) => void) => void,
    body: (s: Served) => Promise<void>,
  ): Promise<void> => {
    current ??= start();
    const served = await current;
    const extra: string[] = [];
    let passed = false;
    releaseAtTestEnd(async () => {
      if (!passed) await stop();
      for (const p of extra) rmSync(p, { recursive: true, force: true });
    });
    setup(served.dir, (p) => extra.push(p));
    await body(served);
    passed = true;
  };
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
function expectStructured(
  out: { isError: boolean; json: any; text?: string },
  allowed?: string[],
  label = "",
) {
  if (!out.isError) return;
  const code = out.json?.error?.code;
  const why = `${label} ${out.text ?? JSON.stringify(out.json)}`.slice(0, 500);
  expect(code, why).toBeTypeOf("string");
  expect(code, why).not.toBe("INTERNAL_ERROR");
  if (allowed) expect(allowed, why).toContain(code);
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
      const { dir: outside } = tempDir("pagewise-reliability-outside-", { inMemory: true });
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
    kind: "a rule that backtracks over a long name",
    make: (dir) => {
      writeFileSync(path.join(dir, ".gitignore"), `${"*a".repeat(14)}*b\n`);
      writeFileSync(path.join(dir, "a".repeat(200)), "x\n");
    },
  },
  {
    kind: "a 64 MiB file of rules",
    make: (dir) => writeLarge(path.join(dir, ".gitignore"), "build-*/**/cache-?[0-9]*.tmp\n", 64),
  },
];

describe("hostile .gitignore files", () => {
  const withShared = sharedServer();
  for (const [index, { kind, make }] of HOSTILE_GITIGNORES.entries()) {
    it(
      `${kind}: list and search answer, other calls too, and nothing outside applies`,
      async () => {
        // Each kind in a directory of its own, listed and searched as the walk's top directory.
        const top = `kind-${index}`;
        await withShared(
          (root, removeLater) => {
            const dir = path.join(root, top);
            mkdirSync(dir);
            removeLater(dir);
            ignoredTree(dir);
            make(dir, removeLater);
          },
          async (s) => {
            // More list calls than libuv has pool threads: a blocking read would take them all.
            const lists = Array.from(
              { length: 6 },
              () => () => s.server.call("list", { path: top, recursive: true, max_tokens: 4000 }),
            );
            const searches = Array.from(
              { length: 2 },
              () => () =>
                s.server.call("search", { pattern: "needle", path: top, max_tokens: 4000 }),
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
      name: "tail grep written as /regex/",
      call: (s) => s.call("tail", { path: "evil.log", grep: "/(a+)+$/", max_tokens: 2000 }),
    },
    {
      name: "tail grep written as /regex/i",
      call: (s) => s.call("tail", { path: "evil.log", grep: "/(a|a)+$/i", max_tokens: 2000 }),
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
  // The same tree for every case, on one server.
  const withShared = sharedServer();
  for (const { name, call } of cases) {
    it(
      `${name}: other calls are answered, and the answer is right or a structured refusal`,
      async () => {
        await withShared(
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

/** One version of a file: every line is made of its letter only, so a mixed page shows. */
const versionText = (letter: string) => `${letter.repeat(60)}\n`.repeat(100);
const versionJson = (letter: string) =>
  JSON.stringify(Array.from({ length: 100 }, () => letter.repeat(60)));

/** The version letters (A, B) that appear in a text. */
function lettersOf(text: string): string[] {
  return [...new Set(text.match(/[AB]/g) ?? [])].sort();
}

/** Each tool with a continuation: its first call, how to continue, and the content of a page. */
const CONTINUED: Array<{
  tool: string;
  first: Record<string, unknown>;
  next: (page: any) => Record<string, unknown> | undefined;
  content: (page: any) => string;
  /** The contract lets a continuation re-base on the new version, without mixing. */
  mayRebase?: boolean;
}> = [
  {
    tool: "read",
    first: { path: "v.txt", max_tokens: 300 },
    next: (p) => (p.next_cursor ? { cursor: p.next_cursor } : undefined),
    content: (p) => p.content,
  },
  {
    tool: "tail",
    first: { path: "v.txt", limit: 5 },
    next: (p) => (p.earlier_cursor ? { path: "v.txt", before: p.earlier_cursor } : undefined),
    content: (p) => p.items.map((i: { text: string }) => i.text).join("\n"),
  },
  {
    tool: "search",
    first: { pattern: "^[AB]", limit: 5, glob: "v.txt" },
    next: (p) => (p.next_cursor ? { cursor: p.next_cursor } : undefined),
    content: (p) => p.items.map((i: { text: string }) => i.text).join("\n"),
    mayRebase: true,
  },
  {
    tool: "json_read",
    first: { path: "v.json", language: "jsonpath", query: "$[*]", max_items: 5 },
    next: (p) => (p.next_cursor ? { cursor: p.next_cursor } : undefined),
    content: (p) => p.items.map((i: { value: unknown }) => JSON.stringify(i.value)).join(),
  },
];

function writeVersions(dir: string, letter: string): void {
  writeFileSync(path.join(dir, "v.txt"), versionText(letter));
  writeFileSync(path.join(dir, "v.json"), versionJson(letter));
}

describe("rewrites during every tool's continuation", () => {
  const withShared = sharedServer();
  it("a same-size rewrite with its mtime put back is CONTENT_CHANGED, never the new text", async () => {
    await withShared(
      (dir) => writeVersions(dir, "A"),
      async (s) => {
        const wrong: string[] = [];
        for (const { tool, first, next, content, mayRebase } of CONTINUED) {
          writeVersions(s.dir, "A");
          const page1 = await s.server.call(tool, first);
          expect(page1.isError, `${tool}: ${page1.text}`).toBe(false);
          expect(lettersOf(content(page1.json)), tool).toEqual(["A"]);
          const args = next(page1.json);
          expect(args, `${tool} has a next page`).toBeDefined();
          for (const file of ["v.txt", "v.json"]) {
            const target = path.join(s.dir, file);
            execFileSync("touch", ["-r", target, `${target}.stamp`]);
            writeFileSync(target, file === "v.txt" ? versionText("B") : versionJson("B"));
            execFileSync("touch", ["-r", `${target}.stamp`, target]);
            unlinkSync(`${target}.stamp`);
          }
          const page2 = await s.server.call(tool, args!);
          const rebased = mayRebase && !page2.isError && lettersOf(content(page2.json)).length <= 1;
          if (!rebased && page2.json?.error?.code !== "CONTENT_CHANGED")
            wrong.push(`${tool}: ${page2.text.slice(0, 300)}`);
        }
        expect(wrong).toEqual([]);
      },
    );
  });

  it(
    "while another process rewrites the files, every page is one version, and a continuation is the first page's version or CONTENT_CHANGED",
    async () => {
      await withShared(
        (dir) => writeVersions(dir, "A"),
        async (s) => {
          const vars = {
            txt: path.join(s.dir, "v.txt"),
            json: path.join(s.dir, "v.json"),
            ta: versionText("A"),
            tb: versionText("B"),
            ja: versionJson("A"),
            jb: versionJson("B"),
          };
          const churner = startChurner(
            "fs.writeFileSync(v.txt, v.ta); fs.writeFileSync(v.json, v.ja); fs.writeFileSync(v.txt, v.tb); fs.writeFileSync(v.json, v.jb);",
            vars,
          );
          const wrong: string[] = [];
          let changed = 0;
          try {
            for (let trial = 0; trial < 25; trial++) {
              for (const { tool, first, next, content, mayRebase } of CONTINUED) {
                const page1 = await s.server.call(tool, first);
                expectStructured(page1);
                if (page1.isError) continue;
                const seen = lettersOf(content(page1.json));
                if (seen.length > 1) wrong.push(`${tool} first page mixed: ${seen}`);
                const args = next(page1.json);
                if (!args) continue;
                const page2 = await s.server.call(tool, args);
                expectStructured(page2);
                if (page2.json?.error?.code === "CONTENT_CHANGED") changed++;
                if (page2.isError) continue;
                const later = lettersOf(content(page2.json));
                const sameVersion = later.every((l) => seen.length === 0 || seen.includes(l));
                if (later.length > 1 || (!sameVersion && !mayRebase))
                  wrong.push(`${tool} continuation: first page ${seen}, next page ${later}`);
              }
            }
          } finally {
            await churner.stop();
          }
          expect(wrong).toEqual([]);
          // The race really happened: some continuations saw the file change under them.
          expect(changed).toBeGreaterThan(0);
          expect(isRunning(s.pid)).toBe(true);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );

  it(
    "list pages are each one directory's entries while the directory is swapped",
    async () => {
      await withShared(
        (dir) => {
          for (const [name, letter] of [
            ["d", "A"],
            [".other", "B"],
          ] as const) {
            mkdirSync(path.join(dir, name));
            for (let i = 0; i < 40; i++)
              writeFileSync(path.join(dir, name, `${letter}-${String(i).padStart(3, "0")}`), "");
          }
        },
        async (s) => {
          const vars = {
            d: path.join(s.dir, "d"),
            other: path.join(s.dir, ".other"),
            held: path.join(s.dir, ".held"),
          };
          const churner = startChurner(
            "fs.renameSync(v.d, v.held); fs.renameSync(v.other, v.d); fs.renameSync(v.held, v.other);",
            vars,
          );
          const wrong: string[] = [];
          try {
            for (let trial = 0; trial < 60; trial++) {
              const page1 = await s.server.call("list", { path: "d", limit: 10 });
              expectStructured(page1);
              if (page1.isError) continue;
              const names = (p: any) => p.items.map((i: { path: string }) => i.path[0]).join("");
              if (lettersOf(names(page1.json)).length > 1)
                wrong.push(`mixed: ${names(page1.json)}`);
              if (!page1.json.next_cursor) continue;
              const page2 = await s.server.call("list", { cursor: page1.json.next_cursor });
              expectStructured(page2);
              if (!page2.isError && lettersOf(names(page2.json)).length > 1)
                wrong.push(`mixed continuation: ${names(page2.json)}`);
            }
          } finally {
            await churner.stop();
          }
          expect(wrong).toEqual([]);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );
});

describe("a directory swapped for a symlink to the outside while it is walked", () => {
  it(
    "never lists or searches the outside directory",
    async () => {
      await withServer(
        (dir, removeLater) => {
          const outside = `${dir}-outside`;
          mkdirSync(outside);
          removeLater(outside);
          mkdirSync(path.join(dir, "sub"));
          for (let i = 0; i < 50; i++) {
            writeFileSync(path.join(dir, "sub", `inside-${i}.txt`), "plain\n");
            writeFileSync(path.join(outside, `OUTSIDE-${i}.txt`), "SECRET\n");
          }
          // Directories walked before `sub` widen the window between seeing it and reading it.
          for (let i = 0; i < 100; i++) {
            mkdirSync(path.join(dir, `a-${i}`));
            writeFileSync(path.join(dir, `a-${i}`, "f.txt"), "plain\n");
          }
        },
        async (s) => {
          const vars = {
            sub: path.join(s.dir, "sub"),
            held: path.join(s.dir, ".held"),
            outside: `${s.dir}-outside`,
          };
          const churner = startChurner(
            "fs.renameSync(v.sub, v.held); fs.symlinkSync(v.outside, v.sub); fs.unlinkSync(v.sub); fs.renameSync(v.held, v.sub);",
            vars,
          );
          const leaks: string[] = [];
          let swappedOut = 0;
          try {
            // `sub` is a directory for a quarter of the churner's cycle and a link for another,
            // and 100 directories are walked between reading its name and opening it: each
            // walk that follows a link there leaks with a chance of about 1 in 16, so a walk
            // that follows links fails 100 trials of two walks all but certainly.
            for (let trial = 0; trial < 100; trial++) {
              const [listed, searched] = await Promise.all([
                s.server.call("list", { recursive: true, limit: 1000, max_tokens: 25000 }),
                s.server.call("search", { pattern: "SECRET", case_sensitive: true }),
              ]);
              expectStructured(listed);
              expectStructured(searched);
              if (!listed.isError && listed.json.pagination.has_more) leaks.push("list truncated");
              if (!listed.isError && listed.text.includes("OUTSIDE")) leaks.push("list");
              if (!searched.isError && searched.json.pagination.total > 0) leaks.push("search");
              if (!listed.isError && !listed.text.includes("sub/inside-49")) swappedOut++;
            }
          } finally {
            await churner.stop();
          }
          expect(leaks).toEqual([]);
          // The swaps really ran during the walks: some listings found `sub` gone or a link.
          expect(swappedOut).toBeGreaterThan(0);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );
});

describe("a line cursor over a record longer than 1 MiB", () => {
  const recordBytes = 3 << 19; // 1.5 MiB: its middle is over 512 KiB from either end

  /** Rewrites 4 KiB in the middle of the record: same size, same mtime. */
  function rewriteMiddle(file: string): void {
    execFileSync("touch", ["-r", file, `${file}.stamp`]);
    const fd = openSync(file, "r+");
    writeSync(fd, "B".repeat(4096), 6 + (recordBytes >> 1));
    closeSync(fd);
    execFileSync("touch", ["-r", `${file}.stamp`, file]);
    unlinkSync(`${file}.stamp`);
  }

  const withShared = sharedServer();
  for (const [index, when] of ["before its first page", "between its pages"].entries()) {
    it(
      `never mixes versions when the middle is rewritten ${when}`,
      async () => {
        const name = `big-${index}.log`;
        await withShared(
          (dir) => writeFileSync(path.join(dir, name), `start\n${"A".repeat(recordBytes)}\nend\n`),
          async (s) => {
            const file = path.join(s.dir, name);
            const tail = await s.server.call("tail", { path: name, max_chars_per_item: 100 });
            expect(tail.isError, tail.text).toBe(false);
            const clamped = tail.json.items.find((i: { line_cursor?: string }) => i.line_cursor);
            expect(clamped, "the long record carries a line_cursor").toBeDefined();
            if (when === "before its first page") rewriteMiddle(file);
            let page = await s.server.call("read", {
              cursor: clamped.line_cursor,
              max_tokens: 20000,
            });
            const served: string[] = [];
            if (!page.isError) served.push(...lettersOf(page.json.content));
            if (when === "between its pages") rewriteMiddle(file);
            for (let pages = 0; pages < 2000 && page.json?.has_more; pages++) {
              page = await s.server.call("read", {
                cursor: page.json.next_cursor,
                max_tokens: 20000,
              });
              if (page.isError) break;
              served.push(...lettersOf(page.json.content));
            }
            expect(served).not.toContain("B");
            expect(page.json?.error?.code, page.text.slice(0, 300)).toBe("CONTENT_CHANGED");
          },
        );
      },
      ATTACK_TEST_TIMEOUT_MS * 2,
    );
  }
});

/** Overwrites `file` in place with `bytes` (same size: no truncation, one write). */
function overwriteInPlace(file: string, bytes: Buffer): void {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, 0);
  } finally {
    closeSync(fd);
  }
}

/** `count` numbered lines of different lengths, so that another order moves every line end. */
function numberedLines(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `A${String(i).padStart(7, "0")} ${"x".repeat((i * 7) % 53)}\n`,
  );
}

/** Lines `offset` to `offset + limit` of `text`, with their terminators. */
function linesOf(text: string, offset: number, limit: number): string {
  return text
    .split("\n")
    .slice(offset, offset + limit)
    .map((line) => `${line}\n`)
    .join("");
}

/** Byte offsets just after each line end of `bytes`. */
function lineEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) ends.push(i + 1);
  return ends;
}

/** How many of the ascending `values` are at most `bound`. */
function countAtMost(values: number[], bound: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether an answer is lines `offset` to `offset + limit` of the file as it stood at one moment
 * while it was overwritten in place, one version `a` with the other `b` (same size) or back: the
 * first `k` bytes already written, the rest not yet, `k` a multiple of 4 KiB (the kernel copies a
 * write a page folio at a time, and every folio starts on a 4 KiB boundary). Any reader of the file
 * sees such a moment while a writer is in the middle of one write(); an answer that is none of them
 * was stitched from reads made at different moments.
 */
function oneMomentOf(a: Buffer, b: Buffer, offset: number, limit: number) {
  const versions = [a, b];
  const ends = [lineEnds(a), lineEnds(b)];
  /** Lines `offset` to `offset + limit` of versions[first][0, k) + versions[second][k, n). */
  const linesAt = (first: number, second: number, k: number): string => {
    const lineStart = (line: number): number => {
      if (line === 0) return 0;
      const before = countAtMost(ends[first]!, k);
      if (line <= before) return ends[first]![line - 1]!;
      const index = countAtMost(ends[second]!, k) + (line - before) - 1;
      return ends[second]![index] ?? a.length;
    };
    const from = lineStart(offset);
    const to = lineStart(offset + limit);
    if (to <= k) return versions[first]!.toString("utf8", from, to);
    if (from >= k) return versions[second]!.toString("utf8", from, to);
    return versions[first]!.toString("utf8", from, k) + versions[second]!.toString("utf8", k, to);
  };
  return (answer: string): boolean => {
    for (const [first, second] of [
      [0, 1],
      [1, 0],
    ] as const) {
      for (let k = 0; ; k = Math.min(a.length, k + 4096)) {
        if (linesAt(first, second, k) === answer) return true;
        if (k === a.length) break;
      }
    }
    return false;
  };
}

describe("line positions and line mode while a file is rewritten in place", () => {
  it(
    "line checkpoints learned while the file changed never serve a later call: every answer matches a fresh server",
    async () => {
      const args = { path: "numbered.txt", offset: 271_738, limit: 2, max_tokens: 600 };
      const lines = numberedLines(300_000);
      const base = Buffer.from(lines.join(""));
      const reversed = Buffer.from([...lines].reverse().join(""));
      const right = linesOf(base.toString(), args.offset, args.limit);
      /** Each trial's text is new (its first line differs), so no line position of it is known. */
      const versionsOf = (trial: number) => {
        const original = Buffer.from(base);
        original[8] = "abcdefghijklmnop".charCodeAt(trial);
        return { original, oneMoment: oneMomentOf(original, reversed, args.offset, args.limit) };
      };
      await withServer(
        () => undefined,
        async (s) => {
          const file = path.join(s.dir, "numbered.txt");
          const wrong: string[] = [];
          let raced = 0;
          let last: ToolOutcome | undefined;
          // The rewrite lands once the server has read this many MiB in the call: while it takes
          // the version (a server that hashes the file reads it whole first), or while it looks
          // for the line (17 MiB in); or, past what the call reads, after it.
          const thresholdsMiB = [1, 5, 9, 13, 21, 25, 29, 33];
          for (let trial = 0; trial < 16; trial++) {
            const version = versionsOf(trial);
            writeFileSync(file, version.original);
            let answered = false;
            const during = s.server.call("read", args).finally(() => {
              answered = true;
            });
            const readBefore = bytesRead(s.pid);
            const threshold = thresholdsMiB[trial % thresholdsMiB.length]! << 20;
            while (!answered && bytesRead(s.pid) - readBefore < threshold)
              await new Promise((resolve) => setTimeout(resolve, 1));
            overwriteInPlace(file, reversed);
            const first = await during;
            expectStructured(first, ["CONTENT_CHANGED"]);
            if (first.isError || first.json.content !== right) raced++;
            if (!first.isError && !version.oneMoment(first.json.content))
              wrong.push(`during the rewrite: ${first.json.content}`);
            // The same bytes as the first call was asked about, back in place.
            overwriteInPlace(file, version.original);
            last = await s.server.call("read", args);
            if (last.json?.content !== right) wrong.push(`after it: ${last.text.slice(0, 200)}`);
          }
          const fresh = await startServer(["--root", s.dir]);
          try {
            const again = await fresh.call("read", args);
            expect(again.json.content).toBe(right);
            expect(last?.json?.version).toBe(again.json.version);
            expect(last?.text).toBe(again.text);
          } finally {
            await fresh.close();
          }
          expect(wrong).toEqual([]);
          // The race really happened: some first calls saw the file change under them.
          expect(raced).toBeGreaterThan(0);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );

  for (const { size, lines, pauseMs } of [
    { size: "a small file", lines: 2_000, pauseMs: 0 },
    { size: "a file too large to snapshot", lines: 300_000, pauseMs: 60 },
  ]) {
    it(
      `line mode answers from one version while another process flips ${size} in place`,
      async () => {
        const numbered = numberedLines(lines);
        const a = numbered.join("");
        // Version B: the same lines in another order, so the same size and other line ends.
        const b = [...numbered].reverse().join("").replaceAll("A", "B");
        const offset = Math.floor(lines * 0.9);
        const oneMoment = oneMomentOf(Buffer.from(a), Buffer.from(b), offset, 5);
        await withServer(
          (dir) => writeFileSync(path.join(dir, "flipped.txt"), a),
          async (s) => {
            writeFileSync(path.join(s.dir, "a.version"), a);
            writeFileSync(path.join(s.dir, "b.version"), b);
            // In place (no truncation), with `pauseMs` between flips (Atomics.wait sleeps).
            const churner = startChurner(
              `if (!globalThis.fd) { globalThis.fd = fs.openSync(v.file, "r+"); globalThis.a = fs.readFileSync(v.a); globalThis.b = fs.readFileSync(v.b); globalThis.cell = new Int32Array(new SharedArrayBuffer(4)); }
              fs.writeSync(fd, b, 0, b.length, 0); Atomics.wait(cell, 0, 0, Number(v.pauseMs));
              fs.writeSync(fd, a, 0, a.length, 0); Atomics.wait(cell, 0, 0, Number(v.pauseMs));`,
              {
                a: path.join(s.dir, "a.version"),
                b: path.join(s.dir, "b.version"),
                file: path.join(s.dir, "flipped.txt"),
                pauseMs: String(pauseMs),
              },
            );
            const wrong: string[] = [];
            let answered = 0;
            try {
              for (let trial = 0; trial < 60; trial++) {
                const out = await s.server.call("read", { path: "flipped.txt", offset, limit: 5 });
                expectStructured(out, ["CONTENT_CHANGED"]);
                if (out.isError) continue;
                answered++;
                if (!oneMoment(out.text)) wrong.push(out.text.slice(0, 300));
              }
            } finally {
              await churner.stop();
            }
            expect(wrong).toEqual([]);
            expect(answered).toBeGreaterThan(0);
          },
        );
      },
      ATTACK_TEST_TIMEOUT_MS * 2,
    );
  }
});

describe("versions of files of any size", () => {
  /** A file of `sizeMiB` MiB whose first MiB is `head` and whose rest is a hole (sparse). */
  function sparseFile(file: string, head: string, sizeMiB: number): void {
    writeFileSync(file, head);
    execFileSync("truncate", ["-s", `${sizeMiB}M`, file]);
  }
  const numbered = numberedLines(20_000).join("");
  // Past the 4 MiB that json_open validates (its probe).
  const records = Array.from(
    { length: 30_000 },
    (_, i) => `{"id":${i},"pad":"${"p".repeat(150)}"}\n`,
  );

  it(
    "the first page of a 1 GiB file reads about a page, for read and json_read, in line and page mode",
    async () => {
      await withServer(
        (dir) => {
          sparseFile(path.join(dir, "big.txt"), numbered, 1024);
          sparseFile(path.join(dir, "big.jsonl"), records.join(""), 1024);
        },
        async (s) => {
          const calls: Array<[string, Record<string, unknown>]> = [
            ["read", { path: "big.txt", max_tokens: 2000 }],
            ["read", { path: "big.txt", limit: 20 }],
            ["read", { path: "big.txt", offset: 19_000, limit: 5, max_tokens: 2000 }],
            [
              "json_read",
              { path: "big.jsonl", language: "jsonpath", query: "$[*].id", max_items: 5 },
            ],
            ["json_open", { path: "big.jsonl" }],
          ];
          for (const [tool, args] of calls) {
            const before = bytesRead(s.pid);
            const out = await s.server.call(tool, args);
            expect(out.isError, `${tool}: ${out.text.slice(0, 300)}`).toBe(false);
            // A server that hashed the file for its version would read all 1,024 MiB.
            expect(bytesRead(s.pid) - before, `${tool} ${JSON.stringify(args)}`).toBeLessThan(
              8 << 20,
            );
          }
          const first = await s.server.call("read", { path: "big.txt", max_tokens: 2000 });
          const next = await s.server.call("read", { cursor: first.json.next_cursor });
          expect(next.json.version).toBe(first.json.version);
          expect(next.json.position.byte).toBe(Buffer.byteLength(first.json.content));
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );

  it(
    "a same-size rewrite of a large file with its mtime put back is CONTENT_CHANGED, for a cursor and a json handle",
    async () => {
      await withServer(
        (dir) => {
          writeLarge(path.join(dir, "large.txt"), "a line of a large file\n", 12);
          // 32-byte records: whole ones in every MiB.
          writeLarge(path.join(dir, "large.jsonl"), '{"k":"a line of a large file."}\n', 12);
        },
        async (s) => {
          const page = await s.server.call("read", { path: "large.txt", max_tokens: 500 });
          const opened = await s.server.call("json_open", { path: "large.jsonl" });
          const query = await s.server.call("json_read", {
            path: "large.jsonl",
            language: "jsonpath",
            query: "$[*].k",
            max_items: 2,
          });
          for (const [name, from, to] of [
            ["large.txt", "a line", "A LINE"],
            ["large.jsonl", "a line", "A LINE"],
          ] as const) {
            const file = path.join(s.dir, name);
            execFileSync("touch", ["-r", file, `${file}.stamp`]);
            // Deep in the file, far from anything a page read: only the version can tell.
            const fd = openSync(file, "r+");
            expect(to.length).toBe(from.length);
            writeSync(fd, to, (10 << 20) + 6);
            closeSync(fd);
            execFileSync("touch", ["-r", `${file}.stamp`, file]);
            unlinkSync(`${file}.stamp`);
          }
          const next = await s.server.call("read", { cursor: page.json.next_cursor });
          expect(next.json?.error?.code, next.text.slice(0, 300)).toBe("CONTENT_CHANGED");
          const handle = await s.server.call("json_read", {
            file_id: opened.json.file_id,
            language: "jsonpath",
            query: "$[*].k",
          });
          expect(handle.json?.error?.code, handle.text.slice(0, 300)).toBe("CONTENT_CHANGED");
          const more = await s.server.call("json_read", { cursor: query.json.next_cursor });
          expect(more.json?.error?.code, more.text.slice(0, 300)).toBe("CONTENT_CHANGED");
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );

  it(
    "two server processes over one directory give a large file the same version and continue each other's cursors",
    async () => {
      const key = "replica-key-0123456789abcdef-0123456789";
      await withServer(
        (dir) => sparseFile(path.join(dir, "shared.txt"), numbered, 256),
        async (s) => {
          const replicas = await Promise.all([
            startServer(["--root", s.dir], { PAGEWISE_CURSOR_KEY: key }),
            startServer(["--root", s.dir], { PAGEWISE_CURSOR_KEY: key }),
          ]);
          try {
            const [a, b] = replicas as [ServerHandle, ServerHandle];
            const args = { path: "shared.txt", max_tokens: 1000 };
            const pageA = await a.call("read", args);
            const pageB = await b.call("read", args);
            expect(pageA.isError, pageA.text.slice(0, 300)).toBe(false);
            expect(pageB.text).toBe(pageA.text);
            // Each continues the other's cursor.
            const onB = await b.call("read", { cursor: pageA.json.next_cursor });
            const onA = await a.call("read", { cursor: pageA.json.next_cursor });
            expect(onB.isError, onB.text.slice(0, 300)).toBe(false);
            expect(onB.text).toBe(onA.text);
            expect(onB.json.version).toBe(pageA.json.version);
          } finally {
            await Promise.all(replicas.map((r) => r.close()));
          }
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );
});

/** Two identities over HTTP, each with its own root; the attacker is alice. */
async function withHttp(
  setup: (rootA: string) => void,
  body: (h: {
    url: string;
    base: string;
    pid: number;
    call: (who: "alice" | "bob", tool: string, args: Record<string, unknown>) => Promise<any>;
    bobAnswers: () => Promise<void>;
  }) => Promise<void>,
  extraArgs: string[] = [],
): Promise<void> {
  const { dir, cleanup } = tempDir("pagewise-reliability-http-", { inMemory: true });
  const tokens = { alice: "alice-token-5c1e9a", bob: "bob-token-8d2f7b" };
  const rootA = path.join(dir, "a");
  const rootB = path.join(dir, "b");
  mkdirSync(rootA);
  mkdirSync(rootB);
  writeFileSync(path.join(rootB, TINY), TINY_TEXT);
  const { createHash } = await import("node:crypto");
  const sha = (t: string) => createHash("sha256").update(t).digest("hex");
  writeFileSync(
    path.join(dir, "auth.json"),
    JSON.stringify({
      identities: [
        { name: "alice", token_sha256: sha(tokens.alice), roots: [rootA] },
        { name: "bob", token_sha256: sha(tokens.bob), roots: [rootB] },
      ],
    }),
  );
  let server: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  let id = 0;
  releaseAtTestEnd(cleanup);
  try {
    setup(rootA);
    server = await startHttpServer(["--auth-file", path.join(dir, "auth.json"), ...extraArgs]);
    // Never rejects: a call cut off when a stalled server is killed becomes a failing outcome.
    const call = async (who: "alice" | "bob", tool: string, args: Record<string, unknown>) => {
      try {
        const res = await postRpc(server!.url, tokens[who], toolCall(++id, tool, args));
        return toolOutcome(res.json);
      } catch (err) {
        return { isError: true, json: { error: { code: "NO_ANSWER", message: String(err) } } };
      }
    };
    const bobAnswers = async () => {
      const tiny = await call("bob", "read", { path: TINY, max_tokens: 200 });
      expect(tiny.json?.content).toBe(TINY_TEXT);
      const health = await fetch(`${server!.base}/healthz`);
      expect(health.status).toBe(200);
    };
    await body({ url: server.url, base: server.base, pid: server.pid, call, bobAnswers });
    expect(server.exited()).toBe(false);
    expect(processMemory(server.pid).peakKiB).toBeLessThanOrEqual(PEAK_RSS_CEILING_KIB);
  } finally {
    await server?.stop();
    cleanup();
  }
}

describe("over HTTP, one identity's attack never stalls another", () => {
  it(
    "a JSON-RPC batch of 60 searches is refused or each call counts: memory stays bounded, bob is answered",
    async () => {
      await withHttp(
        (rootA) => {
          const text = "lorem ipsum dolor sit amet consectetur\n".repeat(3000);
          for (let i = 0; i < 60; i++) writeFileSync(path.join(rootA, `f${i}.txt`), text);
        },
        async (h) => {
          const batch = Array.from({ length: 60 }, (_, i) =>
            toolCall(1000 + i, "search", { pattern: "am[e]t\\s+con", max_tokens: 500 }),
          );
          const inFlight = postRpc(h.url, "alice-token-5c1e9a", batch).catch((err: unknown) => ({
            status: 0,
            json: { error: { message: `no answer: ${String(err)}` } },
          }));
          await h.bobAnswers();
          const res = await inFlight;
          expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBeGreaterThan(0);
          if (res.status >= 400 || !Array.isArray(res.json)) {
            // Refused as a whole: an HTTP error or one JSON-RPC error, never a crash.
            expect(res.status === 200 ? res.json?.error : res.status).toBeTruthy();
          } else {
            for (const response of res.json) {
              const out = toolOutcome(response);
              if (out.rpcError) continue;
              expectStructured(out as { isError: boolean; json: any });
            }
          }
        },
        ["--max-concurrent-scans", "2"],
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );

  it(
    "alice's backtracking tail grep: bob's reads and /healthz are answered",
    async () => {
      await withHttp(
        (rootA) => writeFileSync(path.join(rootA, "evil.log"), `start\n${EVIL_LINE}\n`),
        async (h) => {
          const attack = h.call("alice", "tail", { path: "evil.log", grep: "(a+)+$" });
          await h.bobAnswers();
          const out = await attack;
          expectStructured(out, ["INVALID_ARGUMENT", "RESOURCE_LIMIT_EXCEEDED", "CANCELLED"]);
          if (!out.isError) expect(out.json.items).toEqual([]);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );

  it(
    "alice's lists over a FIFO .gitignore: bob's reads and /healthz are answered",
    async () => {
      await withHttp(
        (rootA) => {
          writeFileSync(path.join(rootA, "visible.txt"), "x\n");
          mkfifo(path.join(rootA, ".gitignore"));
        },
        async (h) => {
          const attacks = Array.from({ length: 6 }, () => h.call("alice", "list", {}));
          await h.bobAnswers();
          for (const out of await Promise.all(attacks)) expectStructured(out);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );
});

describe("JSON member names of 100 KB, by the thousand", () => {
  it(
    "keep the server's peak memory under the ceiling, and other calls answered",
    async () => {
      await withServer(
        (dir) => {
          const fd = openSync(path.join(dir, "names.json"), "w");
          try {
            writeSync(fd, "{");
            const filler = "k".repeat(100_000);
            for (let i = 0; i < 1500; i++)
              writeSync(fd, `${i === 0 ? "" : ","}"${String(i).padStart(6, "0")}${filler}":${i}`);
            writeSync(fd, "}");
          } finally {
            closeSync(fd);
          }
        },
        async (s) => {
          const [read, opened] = await underAttack(s, [
            () =>
              s.server.call("json_read", {
                path: "names.json",
                language: "jsonpath",
                query: "$.nope",
              }),
            () => s.server.call("json_open", { path: "names.json", validation: "full" }),
          ]);
          expectStructured(read!, ["RESOURCE_LIMIT_EXCEEDED"]);
          if (!read!.isError) expect(read!.json.items).toEqual([]);
          expectStructured(opened!, ["RESOURCE_LIMIT_EXCEEDED"]);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );
});

describe("more hostile inputs", () => {
  // One server for the inputs that are not about memory; those that walk the tree and count what
  // they find lay it out in a directory of their own.
  const withShared = sharedServer();
  it("paths of 10,000 components", async () => {
    await withShared(
      () => undefined,
      async (s) => {
        const deep = `${"d/".repeat(10_000)}x.txt`;
        for (const [tool, args] of [
          ["read", { path: deep, max_tokens: 200 }],
          ["list", { path: deep }],
          ["search", { pattern: "x", path: deep }],
          ["tail", { path: deep }],
          ["json_read", { path: deep, language: "pointer", query: "" }],
        ] as const) {
          const out = await s.server.call(tool, args);
          expect(out.isError, tool).toBe(true);
          expectStructured(out, ["NOT_FOUND", "INVALID_ARGUMENT"]);
        }
        const dots = await s.server.call("read", { path: `${"./".repeat(10_000)}${TINY}` });
        expectStructured(dots, ["INVALID_ARGUMENT"]);
        if (!dots.isError) expect(dots.text).toBe(TINY_TEXT);
        const up = await s.server.call("read", { path: `${"../".repeat(10_000)}etc/passwd` });
        expect(up.json?.error?.code).toBe("ACCESS_DENIED");
        await expectTinyReadAnswered(s.server);
      },
    );
  });

  it("cursors of 4,096 characters and more, and other spellings of a real cursor", async () => {
    await withShared(
      (dir) => writeFileSync(path.join(dir, "lines.txt"), "line\n".repeat(2000)),
      async (s) => {
        const real = await s.server.call("read", { path: "lines.txt", max_tokens: 300 });
        expect(real.isError, real.text).toBe(false);
        const cursor: string = real.json.next_cursor;
        const bogus = [
          "A".repeat(4096),
          "A".repeat(4097),
          "A".repeat(100_000),
          `${cursor}A`,
          `${cursor}=`,
          cursor.slice(0, -1) + (cursor.endsWith("A") ? "B" : "A"),
        ];
        const wrong: string[] = [];
        for (const value of bogus) {
          for (const [tool, args] of [
            ["read", { cursor: value }],
            ["list", { cursor: value }],
            ["search", { pattern: "line", cursor: value }],
            ["tail", { path: "lines.txt", before: value }],
            ["tail", { path: "lines.txt", after: value }],
            ["json_read", { cursor: value }],
          ] as const) {
            const out = await s.server.call(tool, args);
            const code = out.json?.error?.code;
            if (code !== "INVALID_CURSOR" && code !== "INVALID_ARGUMENT")
              wrong.push(`${tool} ${value.length} chars: ${out.text.slice(0, 200)}`);
          }
        }
        expect(wrong).toEqual([]);
      },
    );
  });

  it(
    "globs that explode: brace products, ranges, nested extglobs",
    async () => {
      await withShared(
        (dir) => {
          for (let i = 0; i < 50; i++)
            writeFileSync(path.join(dir, `${"ab".repeat(i % 7)}${i}`), "");
        },
        async (s) => {
          const globs = [
            "{a,b}".repeat(24),
            "{1..1000000}",
            "{a..z}".repeat(6),
            "{{{{{{{{{{a,b},c},d},e},f},g},h},i},j},k}",
            "+(+(+(+(+(a)))))",
            "*(*(*(*(a|aa|ab))))b",
            "@(a|b|c|ab|ba)".repeat(20),
            "[".repeat(10_000),
          ];
          const outcomes = await underAttack(
            s,
            globs.flatMap((glob) => [
              () => s.server.call("list", { recursive: true, glob }),
              () => s.server.call("search", { pattern: "x", glob }),
            ]),
          );
          for (const out of outcomes)
            expectStructured(out, ["INVALID_ARGUMENT", "RESOURCE_LIMIT_EXCEEDED"]);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS,
  );

  it(
    "a flood of 100 searches at once from one caller over stdio",
    async () => {
      await withServer(
        (dir) => {
          // Every line matches: each search counts 4,000 matches in full for its exact total.
          const text = "lorem ipsum dolor sit amet consectetur\n".repeat(200);
          for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `f${i}.txt`), text);
        },
        async (s) => {
          const flood = Array.from(
            { length: 100 },
            () => () => s.server.call("search", { pattern: "am[e]t\\s+con", max_tokens: 500 }),
          );
          const outcomes = await underAttack(s, flood);
          for (const out of outcomes) {
            expectStructured(out, ["RESOURCE_LIMIT_EXCEEDED"]);
            if (!out.isError) expect(out.json.pagination.total).toBe(4000);
          }
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 2,
  );

  it("symlink loops in a listed tree", async () => {
    await withShared(
      (root, removeLater) => {
        const dir = path.join(root, "loops");
        mkdirSync(path.join(dir, "sub"), { recursive: true });
        removeLater(dir);
        writeFileSync(path.join(dir, "sub", "f.txt"), "needle\n");
        symlinkSync(".", path.join(dir, "loop"));
        symlinkSync("..", path.join(dir, "sub", "up"));
        symlinkSync("b", path.join(dir, "a"));
        symlinkSync("a", path.join(dir, "b"));
        symlinkSync("self", path.join(dir, "self"));
      },
      async (s) => {
        const [listed, searched, read] = await underAttack(s, [
          () => s.server.call("list", { path: "loops", recursive: true, include_hidden: true }),
          () => s.server.call("search", { pattern: "needle", path: "loops" }),
          () => s.server.call("read", { path: "loops/a", max_tokens: 200 }),
        ]);
        expect(listed!.isError, listed!.text).toBe(false);
        expect(listed!.json.pagination.total).toBeLessThan(20);
        expect(searched!.isError, searched!.text).toBe(false);
        expect(searched!.json.pagination.total).toBe(1);
        expectStructured(read!, ["ACCESS_DENIED", "NOT_FOUND", "NOT_A_FILE"]);
        expect(read!.isError).toBe(true);
      },
    );
  });

  it("a file deleted between pages", async () => {
    await withShared(
      () => undefined,
      async (s) => {
        const wrong: string[] = [];
        for (const { tool, first, next } of CONTINUED) {
          writeVersions(s.dir, "A");
          const page1 = await s.server.call(tool, first);
          expect(page1.isError, page1.text).toBe(false);
          unlinkSync(path.join(s.dir, "v.txt"));
          unlinkSync(path.join(s.dir, "v.json"));
          const page2 = await s.server.call(tool, next(page1.json)!);
          const code = page2.json?.error?.code;
          if (
            !["NOT_FOUND", "CONTENT_CHANGED"].includes(code) &&
            !(tool === "search" && !page2.isError)
          )
            wrong.push(`${tool}: ${page2.text.slice(0, 200)}`);
        }
        expect(wrong).toEqual([]);
      },
    );
  });

  it(
    "a directory of 100,000 entries named by the caller",
    async () => {
      await withServer(
        (dir) => {
          mkdirSync(path.join(dir, "big"));
          // Hard links to one empty file: one system call an entry instead of three.
          const empty = path.join(dir, "empty");
          writeFileSync(empty, "");
          for (let i = 0; i < 100_000; i++) linkSync(empty, path.join(dir, "big", `e${i}`));
        },
        async (s) => {
          const [first, globbed] = await underAttack(s, [
            () => s.server.call("list", { path: "big", limit: 10 }),
            () => s.server.call("list", { path: "big", glob: "e9999?", limit: 10 }),
          ]);
          expect(first!.isError, first!.text).toBe(false);
          expect(first!.json.pagination.total).toBe(100_000);
          expect(globbed!.json.pagination.total).toBe(10);
        },
      );
    },
    ATTACK_TEST_TIMEOUT_MS * 3,
  );

  it("JSON nested a million deep, and a JSONPath of 1,000 nested filters", async () => {
    await withShared(
      (dir) => {
        writeFileSync(
          path.join(dir, "deep.json"),
          `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`,
        );
        writeFileSync(path.join(dir, "small.json"), '[{"a":[1]}]');
      },
      async (s) => {
        const nested = `$${"[?@".repeat(1000)}${"]".repeat(1000)}`;
        const outcomes = await underAttack(s, [
          () =>
            s.server.call("json_read", { path: "deep.json", language: "jsonpath", query: "$..*" }),
          () => s.server.call("json_open", { path: "deep.json", validation: "full" }),
          () =>
            s.server.call("json_read", { path: "small.json", language: "jsonpath", query: nested }),
        ]);
        const allowed = [
          "RESOURCE_LIMIT_EXCEEDED",
          "QUERY_SYNTAX_ERROR",
          "UNSUPPORTED_QUERY_FEATURE",
        ];
        const labels = ["deep.json $..*", "deep.json json_open full", "1,000 nested filters"];
        outcomes.forEach((out, i) => {
          expectStructured(out, allowed, labels[i]);
        });
      },
    );
  });

  it("regular expressions too large to compile, or a megabyte long", async () => {
    await withShared(
      (dir) => writeFileSync(path.join(dir, "x.log"), "a\n"),
      async (s) => {
        const outcomes = await underAttack(s, [
          () => s.server.call("search", { pattern: "(?:a{1000}){1000}" }),
          () => s.server.call("search", { pattern: "a|".repeat(500_000) }),
          () => s.server.call("tail", { path: "x.log", grep: "/(?:a{1000}){1000}/" }),
          () => s.server.call("tail", { path: "x.log", grep: "(?:a{1000}){1000}" }),
        ]);
        const labels = [
          "a{1000}{1000}",
          "1 MB alternation",
          "tail /a{1000}{1000}/",
          "tail substring",
        ];
        outcomes.forEach((out, n) => {
          expectStructured(out, ["INVALID_ARGUMENT", "RESOURCE_LIMIT_EXCEEDED"], labels[n]);
        });
      },
    );
  });

  it("file names with newlines, control characters and bytes that are not UTF-8", async () => {
    await withShared(
      (root, removeLater) => {
        const dir = path.join(root, "names");
        mkdirSync(dir);
        removeLater(dir);
        writeFileSync(path.join(dir, TINY), TINY_TEXT);
        writeFileSync(path.join(dir, "new\nline.txt"), "needle\n");
        writeFileSync(path.join(dir, "tab\tbell\u0007.txt"), "needle\n");
        writeFileSync(
          Buffer.concat([Buffer.from(`${dir}/bad-`), Buffer.from([0xff, 0xfe])]),
          "needle\n",
        );
      },
      async (s) => {
        const [listed, searched] = await underAttack(s, [
          () => s.server.call("list", { path: "names" }),
          () => s.server.call("search", { pattern: "needle", path: "names" }),
        ]);
        expectStructured(listed!);
        expectStructured(searched!);
        // All four are listed; the name that is not UTF-8 shows U+FFFD, without size and mtime.
        expect(listed!.isError, listed!.text).toBe(false);
        const items = listed!.json.items as Array<{ path: string; size: number | null }>;
        expect(items.map((i) => i.path).sort()).toEqual(
          ["bad-\uFFFD\uFFFD", "new\nline.txt", "tab\tbell\u0007.txt", TINY].sort(),
        );
        expect(items.find((i) => i.path.startsWith("bad-"))?.size).toBeNull();
        const named = await s.server.call("read", {
          path: "names/new\nline.txt",
          max_tokens: 300,
        });
        expect(named.json?.content, named.text).toBe("needle\n");
      },
    );
  });
});

describe("roots given through a symlink, and paths spelled every way", () => {
  it("serves absolute paths and file:// URIs under both spellings of a symlinked root", async () => {
    const { dir, cleanup } = tempDir("pagewise-reliability-link-", { inMemory: true });
    const realRoot = path.join(dir, "real");
    const link = path.join(dir, "link");
    mkdirSync(realRoot);
    writeFileSync(path.join(realRoot, "file.txt"), "inside\n");
    symlinkSync(realRoot, link);
    const server = await startServer(["--root", link]);
    try {
      for (const spelling of [
        path.join(link, "file.txt"),
        path.join(realRoot, "file.txt"),
        pathToFileURL(path.join(link, "file.txt")).href,
        `FILE://${path.join(realRoot, "file.txt")}`,
        "file.txt",
      ]) {
        const out = await server.call("read", { path: spelling, max_tokens: 200 });
        expect(out.isError, `${spelling}: ${out.text}`).toBe(false);
        expect(out.json.content).toBe("inside\n");
        expect(out.json.uri).toBe(pathToFileURL(path.join(realRoot, "file.txt")).href);
      }
      const slash = await server.call("read", { path: "file.txt/", max_tokens: 200 });
      expect(slash.json.error.code).toBe("NOT_A_DIRECTORY");
      expect(slash.json.error.retry).toEqual({ path: "file.txt" });
      const denied = await server.call("read", { path: "/etc/hostname", max_tokens: 200 });
      expect(denied.json.error.code).toBe("ACCESS_DENIED");
      expect(denied.json.error.message).toContain(JSON.stringify(realRoot));
      expect(denied.json.error.hint).toContain(JSON.stringify(realRoot));
    } finally {
      await server.close();
      cleanup();
    }
  });

  it("refuses to start on a root that is a regular file, with a message and no stack trace", async () => {
    const { dir, cleanup } = tempDir("pagewise-reliability-fileroot-");
    const file = path.join(dir, "file.txt");
    writeFileSync(file, "x\n");
    try {
      const { spawnSync } = await import("node:child_process");
      const { BIN } = await import("./support/server.js");
      const run = spawnSync(process.execPath, [BIN, "serve", "--root", file], {
        input: "",
        encoding: "utf8",
      });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toMatch(/not a directory/i);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      cleanup();
    }
  });
});
