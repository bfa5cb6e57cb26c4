/**
 * The terminal commands as a person uses them: any path from any directory, the content itself
 * with --raw and the next command on stderr, one file searched, help that shows one command's
 * options, errors in flag terms with documented exit statuses, configuration by environment.
 * Commands run in the test's process (support/cli.ts); those whose subject is the process itself
 * (the status it exits with, a server's start) run as processes of their own.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, runCli, spawnCli } from "./support/cli.js";
import { loadedModules, moduleLogEnv } from "./support/loaded-modules.js";
import { BIN, REPO, startServer, tempDir } from "./support/server.js";

const KEY = "cli-e2e-test-key-0123456789abcdef";
let dir: string;
let cleanup: () => void;
let configHome: string;
let cleanupConfig: () => void;

/** The command's environment: a fixed cursor key and a config directory of the test's own. */
function environment(env: Record<string, string | undefined> = {}) {
  return { PAGEWISE_CURSOR_KEY: KEY, XDG_CONFIG_HOME: configHome, ...env };
}

/**
 * `pagewise ARGS` from `cwd` (default "/": every target is outside it), run in this process, its
 * stdout a pipe (or, with `tty`, a terminal).
 */
function pagewise(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; tty?: boolean } = {},
): Promise<CliRun> {
  return runCli(args, {
    cwd: options.cwd ?? "/",
    env: environment(options.env),
    ...(options.tty ? { tty: true } : {}),
  });
}

/** The same as a process of its own, where the subject is the status the process exits with. */
function pagewiseProcess(args: string[], env: Record<string, string | undefined> = {}): CliRun {
  return spawnCli(args, { cwd: "/", env: environment(env) });
}

/** Splits a command line the CLI printed (POSIX words, single quotes) into its arguments. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) {
    out.push(m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]!);
  }
  return out;
}

/** The arguments of the command printed after `label` on stderr (without the leading "pagewise"). */
function followUp(stderr: string, label: string): string[] | undefined {
  const line = stderr.split("\n").find((l) => l.startsWith(label));
  if (!line) return undefined;
  const argv = words(line.slice(label.length).trim());
  expect(argv[0]).toBe("pagewise");
  return argv.slice(1);
}

const lines = Array.from({ length: 400 }, (_, i) => `line ${i} "quoted" \\ tab\there 🙂`);
const text = `${lines.join("\n")}\n`;

beforeAll(() => {
  ({ dir, cleanup } = tempDir("pagewise-cli-"));
  ({ dir: configHome, cleanup: cleanupConfig } = tempDir("pagewise-cli-config-"));
  writeFileSync(path.join(dir, "notes.txt"), text);
  writeFileSync(
    path.join(dir, "app.log"),
    Array.from({ length: 300 }, (_, i) => `${i} ${i % 7 === 0 ? "ERROR" : "info"} event ${i}`)
      .join("\n")
      .concat("\n"),
  );
  writeFileSync(path.join(dir, "other.log"), "ERROR in another file\n");
  writeFileSync(path.join(dir, "odd [1]*.log"), "ERROR with a glob-like name\nfine\n");
  writeFileSync(path.join(dir, "data.json"), '{"items":[{"id":1},{"id":2},{"id":3}]}');
});
afterAll(() => {
  cleanup?.();
  cleanupConfig?.();
});

describe("any path from any directory", () => {
  it("reads a file outside the current directory without --root", async () => {
    const run = await pagewise([
      "read",
      path.join(dir, "notes.txt"),
      "--max-tokens",
      "500",
      "--json",
    ]);
    expect(run.status).toBe(0);
    const page = JSON.parse(run.stdout);
    expect(text.startsWith(page.content)).toBe(true);
    expect(page.has_more).toBe(true);
  });

  it("--raw prints the content itself; following the printed commands rebuilds the file", async () => {
    // Each page is a command of its own: a budget that makes a few pages, not dozens.
    let run = await pagewise([
      "read",
      path.join(dir, "notes.txt"),
      "--max-tokens",
      "3000",
      "--raw",
    ]);
    let rebuilt = "";
    let pages = 0;
    for (; ; pages++) {
      expect(run.status).toBe(0);
      rebuilt += run.stdout;
      const next = followUp(run.stderr, "next page:");
      if (!next) break;
      expect(next).toContain("--raw");
      expect(pages).toBeLessThan(200);
      run = await pagewise(next);
    }
    expect(pages).toBeGreaterThan(1);
    expect(rebuilt).toBe(text);
  }, 180_000);

  it("a file too large to print whole: its first page with --raw, RESPONSE_TOO_LARGE with --json", async () => {
    const big = path.join(dir, "big.txt");
    const content = Array.from({ length: 40_000 }, (_, i) => `${i}`).join("\n");
    writeFileSync(big, content);
    const raw = await pagewise(["read", big, "--raw"]);
    expect(raw.status).toBe(0);
    expect(raw.stdout.length).toBeGreaterThan(0);
    expect(content.startsWith(raw.stdout)).toBe(true);
    expect(followUp(raw.stderr, "next page:")).toContain("--max-tokens");
    const json = await pagewise(["read", big, "--json"]);
    expect(json.status).toBe(1);
    const { error } = JSON.parse(json.stderr);
    expect(error.code).toBe("RESPONSE_TOO_LARGE");
    expect(error.message).not.toContain("max_tokens");
    expect(error.retry_command).toContain("--max-tokens");
  });

  it("a missing file outside the current directory is NOT_FOUND (3), not ACCESS_DENIED", () => {
    const run = pagewiseProcess(["read", path.join(dir, "nope", "missing.txt"), "--raw"]);
    expect(run.status).toBe(3);
    expect(run.stderr).toContain("NOT_FOUND");
  });

  it("with --root, a target outside it is ACCESS_DENIED (4) and the hint names --root", async () => {
    const { dir: other, cleanup: done } = tempDir("pagewise-cli-other-");
    try {
      const run = await pagewise(["read", path.join(dir, "notes.txt"), "--root", other, "--raw"]);
      expect(run.status).toBe(4);
      expect(run.stderr).toContain("--root");
      expect(run.stderr).not.toContain("server");
    } finally {
      done();
    }
  });

  it("tail --raw prints records and the commands for earlier and later ones", async () => {
    const log = path.join(dir, "app.log");
    const run = await pagewise(["tail", log, "--grep", "ERROR", "--limit", "5", "--raw"]);
    expect(run.status).toBe(0);
    const errors = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.includes("ERROR"));
    expect(run.stdout).toBe(`${errors.slice(-5).join("\n")}\n`);
    const earlier = followUp(run.stderr, "earlier records:");
    expect(earlier).toBeDefined();
    const before = await pagewise(earlier!);
    expect(before.status).toBe(0);
    expect(before.stdout).toBe(`${errors.slice(-10, -5).join("\n")}\n`);
    expect(followUp(run.stderr, "records added later:")).toBeDefined();
  });
});

describe("search", () => {
  it("searches one file, and only that file, even with glob characters in its name", async () => {
    for (const name of ["app.log", "odd [1]*.log"]) {
      const file = path.join(dir, name);
      const run = await pagewise(["search", "ERROR", file, "--json", "--limit", "1000"]);
      expect(run.status).toBe(0);
      const page = JSON.parse(run.stdout);
      const expected = readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.includes("ERROR")).length;
      expect(page.pagination.total).toBe(expected);
      expect(new Set(page.items.map((i: { path: string }) => i.path))).toEqual(new Set([name]));
    }
  });

  it("--raw prints PATH:LINE:COLUMN:TEXT, absolute when the target was named absolutely", async () => {
    const file = path.join(dir, "odd [1]*.log");
    const run = await pagewise(["search", "error", file, "--raw"]);
    expect(run.stdout).toBe(`${file}:1:1:ERROR with a glob-like name\n`);
    const relative = await pagewise(["search", "error", "odd [1]*.log", "--raw"], { cwd: dir });
    expect(relative.stdout).toBe("odd [1]*.log:1:1:ERROR with a glob-like name\n");
  });

  it("the next page of a search keeps the paths as the first page spelled them", async () => {
    const first = await pagewise(["search", "ERROR", dir, "--limit", "2", "--raw"]);
    expect(first.stderr).toContain("matches 1-2 of ");
    const line = first.stderr.split("\n").find((l) => l.includes("next page:"))!;
    const second = await pagewise(words(line.slice(line.indexOf("pagewise"))).slice(1));
    expect(second.status).toBe(0);
    for (const hit of [...first.stdout.split("\n"), ...second.stdout.split("\n")].filter(Boolean))
      expect(hit.startsWith(`${dir}/`), hit).toBe(true);
  });

  it("a file with --glob is a usage error that names the flag", async () => {
    const run = await pagewise(["search", "x", path.join(dir, "app.log"), "--glob", "*.log"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("--glob");
  });
});

describe("errors speak flags, with documented exit statuses", () => {
  it("a bad --max-tokens names the flag, never the tool argument", async () => {
    const file = path.join(dir, "notes.txt");
    for (const value of ["abc", "1.5", "0", ""]) {
      const run = await pagewise(["read", file, "--max-tokens", value]);
      expect(run.status).toBe(2);
      expect(run.stderr).toContain("--max-tokens");
      expect(run.stderr).not.toContain("max_tokens");
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
  });

  it("BUDGET_TOO_SMALL offers a command to run again", async () => {
    const run = await pagewise(["read", path.join(dir, "notes.txt"), "--max-tokens", "3", "--raw"]);
    expect(run.status).toBe(2);
    const retry = followUp(
      run.stderr
        .split("\n")
        .find((l) => l.includes("retry:"))!
        .trim(),
      "retry:",
    );
    expect(retry).toContain("--max-tokens");
    expect((await pagewise(retry!)).status).toBe(0);
  });

  it("json FILE without QUERY says what is missing in command-line terms", async () => {
    const run = await pagewise(["json", path.join(dir, "data.json")]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("QUERY");
    expect(run.stderr).not.toContain("file_id");
    const ok = await pagewise([
      "json",
      path.join(dir, "data.json"),
      "$.items[*].id",
      "--max-items",
      "2",
      "--json",
    ]);
    expect(JSON.parse(ok.stdout).items.map((i: { value: number }) => i.value)).toEqual([1, 2]);
  });

  it("a cursor key shorter than 16 bytes is a usage error naming the limit", async () => {
    const run = await pagewise(["read", path.join(dir, "notes.txt")], {
      env: { PAGEWISE_CURSOR_KEY: "short" },
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("PAGEWISE_CURSOR_KEY");
    expect(run.stderr).toContain("16");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("serve --root FILE is refused at start with a plain message", () => {
    const run = pagewiseProcess(["serve", "--root", path.join(dir, "notes.txt")]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("not a directory");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("an unknown option or command is a usage error (2)", async () => {
    expect((await pagewise(["read", "--bogus"])).status).toBe(2);
    expect(pagewiseProcess(["frobnicate"]).status).toBe(2);
  });
});

describe("help and version", () => {
  it("-V and --version print the package's version", async () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(pagewiseProcess(["-V"]).stdout).toBe(`${version}\n`);
    expect((await pagewise(["--version"])).stdout).toBe(`${version}\n`);
  });

  it("the main help lists each command once and the exit statuses", async () => {
    const help = (await pagewise(["--help"])).stdout;
    for (const command of ["serve", "read", "list", "search", "tail", "json"]) {
      expect(help.match(new RegExp(`^  pagewise ${command} `, "gm"))?.length).toBe(1);
    }
    for (const status of ["0", "1", "2", "3", "4", "5", "70"]) {
      expect(help).toMatch(new RegExp(`^  ${status} +\\S`, "m"));
    }
    expect(help).toContain("PAGEWISE_ROOTS");
  });

  it("a command's help shows only that command's options", async () => {
    const read = (await pagewise(["read", "--help"])).stdout;
    expect(read).toContain("--max-tokens");
    expect(read).toContain("--raw");
    expect(read).not.toContain("--json-max-depth");
    expect(read).not.toContain("--grep");
    expect(read).not.toContain("--http");
    const json = (await pagewise(["help", "json"])).stdout;
    expect(json).toContain("--json-max-depth");
    expect(json).toContain("--pointer");
    expect(json).not.toContain("--max-read-tokens");
    const serve = (await pagewise(["serve", "--help"])).stdout;
    expect(serve).toContain("--http");
    expect(serve).not.toContain("--raw");
  });
});

describe("configuration by environment", () => {
  it("a bad value is reported under the variable's name; a flag wins over the variable", async () => {
    const file = path.join(dir, "notes.txt");
    const bad = await pagewise(["read", file, "--max-tokens", "500"], {
      env: { PAGEWISE_ESTIMATOR: "bogus" },
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("PAGEWISE_ESTIMATOR");
    const flagWins = await pagewise(
      ["read", file, "--max-tokens", "500", "--estimator", "default"],
      {
        env: { PAGEWISE_ESTIMATOR: "bogus" },
      },
    );
    expect(flagWins.status).toBe(0);
  });

  it("PAGEWISE_DEFAULT_MAX_TOKENS and PAGEWISE_MAX_TOKENS_CAP set the budgets", async () => {
    const file = path.join(dir, "notes.txt");
    const capped = await pagewise(["read", file, "--max-tokens", "100000", "--json"], {
      env: { PAGEWISE_MAX_TOKENS_CAP: "400", PAGEWISE_DEFAULT_MAX_TOKENS: "300" },
    });
    expect(capped.status).toBe(0);
    expect(JSON.parse(capped.stdout).max_tokens).toBe(400);
    const inverted = await pagewise(["read", file], {
      env: { PAGEWISE_MAX_TOKENS_CAP: "400", PAGEWISE_DEFAULT_MAX_TOKENS: "500" },
    });
    expect(inverted.status).toBe(2);
  });

  it("serve takes its roots from PAGEWISE_ROOTS, or from arguments", async () => {
    const { dir: second, cleanup: done } = tempDir("pagewise-cli-root2-");
    writeFileSync(path.join(second, "b.txt"), "in the second root\n");
    try {
      const byEnv = await startServer([], {
        PAGEWISE_ROOTS: [dir, second].join(path.delimiter),
        PAGEWISE_CURSOR_KEY: KEY,
      });
      try {
        const page = await byEnv.call("read", { path: path.join(second, "b.txt") });
        expect(page.text).toBe("in the second root\n");
      } finally {
        await byEnv.close();
      }
      const byArgs = await startServer(["--", second], { PAGEWISE_ROOTS: dir });
      try {
        const denied = await byArgs.call("read", { path: path.join(dir, "notes.txt") });
        expect(denied.isError).toBe(true); // arguments win over PAGEWISE_ROOTS
        const page = await byArgs.call("read", { path: "b.txt" });
        expect(page.text).toBe("in the second root\n");
      } finally {
        await byArgs.close();
      }
    } finally {
      done();
    }
  });
});

describe("into a pipe, like the Unix tool each command replaces", () => {
  it("read prints the whole file, even one over the line-mode ceiling (cat)", () => {
    const big = path.join(dir, "over-ceiling.log");
    const content = Array.from({ length: 20_000 }, (_, i) => `${i} event`).join("\n");
    writeFileSync(big, content);
    const run = pagewiseProcess(["read", big, "--max-read-tokens", "1000"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(content);
  });

  it("a reader that goes away (| head) ends the command quietly, status 0", async () => {
    const big = path.join(dir, "epipe.log");
    writeFileSync(big, `${"x".repeat(999)}\n`.repeat(32 * 1024)); // 32 MiB: more than a pipe holds
    const child = spawn(process.execPath, [BIN, "read", big], {
      env: { ...process.env, ...environment() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const first = await Promise.race([
      once(child.stdout, "data").then(([chunk]) => String(chunk)),
      once(child, "close").then(() => ""),
    ]);
    expect(first.startsWith("x"), stderr).toBe(true);
    child.stdout.destroy();
    const status = await new Promise((resolve) => child.on("close", (code) => resolve(code)));
    expect(stderr).toBe("");
    expect(status).toBe(0);
  });

  it("search prints each matching line once, with its line and first match column (rg --column)", async () => {
    const file = path.join(dir, "twice.txt");
    writeFileSync(file, "a foo foo\nb\nc foo\nd\ne\nf\ng foo\n");
    const plain = await pagewise(["search", "foo", file]);
    expect(plain.status).toBe(0);
    expect(plain.stdout).toBe(`${file}:1:3:a foo foo\n${file}:3:3:c foo\n${file}:7:3:g foo\n`);
    // Context lines once where two matches' contexts meet, `--` between groups that do not.
    const context = await pagewise(["search", "foo", file, "-C", "1"]);
    expect(context.stdout).toBe(
      [
        `${file}:1:3:a foo foo`,
        `${file}-2-b`,
        `${file}:3:3:c foo`,
        `${file}-4-d`,
        "--",
        `${file}-6-f`,
        `${file}:7:3:g foo`,
        "",
      ].join("\n"),
    );
  });

  it("search and list print every page's lines, not one page", async () => {
    const tree = path.join(dir, "many");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(tree, { recursive: true });
    for (let i = 0; i < 150; i++) writeFileSync(path.join(tree, `f${i}.txt`), "needle\n");
    const search = await pagewise(["search", "needle", tree]);
    expect(search.stdout.split("\n").filter(Boolean)).toHaveLength(150);
    const list = await pagewise(["list", tree]);
    expect(list.stdout.split("\n").filter(Boolean)).toHaveLength(150);
  });

  it("json prints every match, one value per line as spelled (jq -c), past one page", async () => {
    const file = path.join(dir, "records.jsonl");
    const records = Array.from(
      { length: 250 },
      (_, i) => `{"id": ${i}, "big": 12345678901234567890${i}}`,
    );
    writeFileSync(file, `${records.join("\n")}\n`);
    const ids = await pagewise(["json", file, "$[*].id"]);
    expect(ids.status).toBe(0);
    expect(ids.stdout).toBe(Array.from({ length: 250 }, (_, i) => `${i}\n`).join(""));
    const whole = await pagewise(["json", file, "$[3]"]);
    expect(whole.stdout).toBe('{"id":3,"big":123456789012345678903}\n');
  });
});

describe("on a terminal", () => {
  it("json prints each match pretty with its path, and the command for the next page", async () => {
    const run = await pagewise(
      ["json", path.join(dir, "data.json"), "$.items[*]", "--max-items", "2"],
      { tty: true },
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('/items/0: {\n  "id": 1\n}\n/items/1: {\n  "id": 2\n}\n');
    const next = followUp(run.stderr, "next page:");
    expect(next).toContain("--cursor");
    const rest = await pagewise(next!, { tty: true });
    expect(rest.stdout).toBe('/items/2: {\n  "id": 3\n}\n');
  });
});

describe("usage in flags", () => {
  it("a bad pattern's hint says -F, not the tool argument", async () => {
    const run = await pagewise(["search", "(", path.join(dir, "notes.txt")]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("-F");
    expect(run.stderr).not.toContain("literal: true");
  });

  it("an unknown flag, command or choice gets the nearest real one", async () => {
    const flag = await pagewise(["read", path.join(dir, "notes.txt"), "--max-tokenz", "5"]);
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain("did you mean --max-tokens?");
    const choice = await pagewise(["list", dir, "--type", "fil"]);
    expect(choice.stderr).toContain("did you mean file?");
    const command = pagewiseProcess(["serach", "x"]);
    expect(command.status).toBe(2);
    expect(command.stderr).toContain("did you mean search?");
  });

  it("pagewise with no arguments prints usage on stderr and exits 2", () => {
    const run = pagewiseProcess([]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Usage:");
  });
});

describe("start-up loads only what the command needs", () => {
  /** The modules (of dist/, the SDK's included) `pagewise ARGS` loads, bundled or not. */
  function modulesOf(args: string[], env: Record<string, string> = {}): string[] {
    const log = path.join(dir, "modules.log");
    writeFileSync(log, "");
    const run = pagewiseProcess(args, { ...moduleLogEnv(log), ...env });
    expect(run.status, run.stderr).toBe(0);
    return loadedModules(log);
  }

  it.each([
    ["bundled", {}],
    ["unbundled", { PAGEWISE_UNBUNDLED: "1" }],
  ])(
    "--version loads the version and nothing else; read loads no MCP SDK, no tool schema and no JSON engine (%s)",
    (_, env) => {
      expect(modulesOf(["--version"], env).sort()).toEqual([
        "cli/main.js",
        "cli/usage.js",
        "version.js",
      ]);
      const read = modulesOf(["read", path.join(dir, "notes.txt"), "--raw"], env);
      expect(read.filter((m) => /@modelcontextprotocol|node_modules\/zod\//.test(m))).toEqual([]);
      expect(
        read.filter((m) => /^(tools\/(read|schema)|mcp\/server|json\/(?!limits\.js))/.test(m)),
      ).toEqual([]);
      expect(read).toContain("sources/text/read-text.js");
    },
  );

  it("a tail loads the pattern engines only for a grep", () => {
    const tail = modulesOf(["tail", path.join(dir, "app.log"), "--raw"]);
    expect(tail).toContain("sources/tail/tail.js");
    expect(tail.filter((m) => m.startsWith("sources/pattern/"))).toEqual([]);
    const grep = modulesOf(["tail", path.join(dir, "app.log"), "--grep", "ERROR", "--raw"]);
    expect(grep).toContain("sources/pattern/pattern.js");
  });
});

describe("the commands call the tools without their schemas", () => {
  it("--json prints the page the MCP tool returns for the same arguments", async () => {
    const server = await startServer(["--root", dir], { PAGEWISE_CURSOR_KEY: KEY });
    try {
      const cases: [string[], string, Record<string, unknown>][] = [
        [
          ["read", "notes.txt", "--max-tokens", "700"],
          "read",
          { path: "notes.txt", max_tokens: 700 },
        ],
        [["list", ".", "--limit", "3"], "list", { path: ".", limit: 3 }],
        [
          ["search", "ERROR", ".", "-C", "1", "--limit", "4"],
          "search",
          { pattern: "ERROR", path: ".", context: 1, limit: 4 },
        ],
        [
          ["tail", "app.log", "--grep", "ERROR", "--limit", "3"],
          "tail",
          { path: "app.log", grep: "ERROR", limit: 3 },
        ],
        [
          ["json", "data.json", "$.items[*].id", "--max-items", "2"],
          "json_read",
          { path: "data.json", language: "jsonpath", query: "$.items[*].id", max_items: 2 },
        ],
      ];
      for (const [argv, tool, args] of cases) {
        const cli = await pagewise([...argv, "--root", dir, "--json"], { cwd: dir });
        expect(cli.status, cli.stderr).toBe(0);
        // A list cursor names the walk it continues, so cursors are compared by what they lead to.
        const mcp = (await server.call(tool, args)).text;
        const cursors = /"(?:next|earlier|later)_cursor":"[^"]*"/g;
        expect(cli.stdout.replace(cursors, "C"), argv.join(" ")).toBe(
          `${mcp.replace(cursors, "C")}\n`,
        );
        const next = (text: string) => JSON.parse(text).next_cursor as string | null;
        if (next(mcp) !== null && tool !== "tail") {
          const pageAfter = (cursor: string | null) => server.call(tool, { cursor });
          // Their cursors too name each one's walk (the second it started), so again by content.
          const byContent = async (cursor: string | null) =>
            (await pageAfter(cursor)).text.replace(cursors, "C");
          expect(await byContent(next(cli.stdout))).toBe(await byContent(next(mcp)));
        }
      }
    } finally {
      await server.close();
    }
  });
});
