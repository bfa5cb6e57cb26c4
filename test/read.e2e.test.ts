/**
 * `read` end to end: the real server over stdio, driven by the SDK client as an agent would.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countOpenviking } from "../dist/core/estimate/openviking.js";
import {
  outOfRacyWindow,
  readAllPages,
  type ServerHandle,
  startServer,
  tempDir,
} from "./support/server.js";

const KEY = "test-key-0123456789abcdef-0123456789";
const SEED_LINE = '中文🙂 "quoted" \\ path '.repeat(6000);
/** The files of the "versions" tests, in their own directory, written first so they age. */
const VERSIONED = ["resize", "same", "same-mtime", "rename", "delete", "steady"];
const VERSIONED_BODY = "0123456789abcdef\n".repeat(400);

let server: ServerHandle;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir());
  mkdirSync(path.join(dir, "versions"));
  for (const name of VERSIONED) {
    writeFileSync(path.join(dir, "versions", `${name}.txt`), VERSIONED_BODY);
  }
  writeFileSync(path.join(dir, "seed.txt"), SEED_LINE);
  writeFileSync(path.join(dir, "crlf.txt"), "first\r\nsecond\r\n\r\nlone\rcr\nlast");
  writeFileSync(path.join(dir, "bom.txt"), "\uFEFFbom\0nul\u0001ctl\n");
  writeFileSync(path.join(dir, "empty.txt"), "");
  writeFileSync(
    path.join(dir, "latin1.bin"),
    Buffer.from([0x68, 0x69, 0xe9, 0x0a, 0xff, 0x00, 0x41]),
  );
  writeFileSync(
    path.join(dir, "lines.txt"),
    Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join(""),
  );
  server = await startServer(["--root", dir, "--estimator", "openviking"], {
    PAGEWISE_CURSOR_KEY: KEY,
  });
});

afterAll(async () => {
  await Promise.all([server?.close(), anotherProcess?.then((other) => other.close())]);
  cleanup?.();
});

let anotherProcess: Promise<ServerHandle> | undefined;
/** A second server process on the same root with the same cursor key, started once when needed. */
function secondServer(): Promise<ServerHandle> {
  anotherProcess ??= startServer(["--root", dir, "--estimator", "openviking"], {
    PAGEWISE_CURSOR_KEY: KEY,
  });
  return anotherProcess;
}

describe("page mode", () => {
  it("pages the seed line within budget, losslessly, and fills pages", async () => {
    const pages = await readAllPages(server, { path: "seed.txt" }, 2000);
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.map((p) => p.json.content).join("")).toBe(SEED_LINE);
    for (const [i, page] of pages.entries()) {
      expect(page.blocks).toBe(1);
      expect(page.structured).toBeUndefined();
      const tokens = countOpenviking(page.text);
      expect(tokens).toBeLessThanOrEqual(2000);
      if (i < pages.length - 1) {
        // What the budget could carry for content: the budget minus this page's metadata.
        const overhead = countOpenviking(JSON.stringify({ ...page.json, content: "" }));
        const contentTokens = tokens - overhead;
        expect(contentTokens / (2000 - overhead)).toBeGreaterThanOrEqual(0.85);
      }
    }
    const last = pages.at(-1)!.json;
    expect(last.has_more).toBe(false);
    expect(last.next_cursor).toBeNull();
  });

  it("keeps CRLF, lone CR, BOM, NUL and control characters exactly", async () => {
    for (const name of ["crlf.txt", "bom.txt"]) {
      const pages = await readAllPages(server, { path: name }, 60);
      expect(pages.map((p) => p.json.content).join("")).toBe(
        readFileSync(path.join(dir, name), "utf8"),
      );
    }
  });

  it("gives one empty page for an empty file", async () => {
    const page = await server.call("read", { path: "empty.txt", max_tokens: 100 });
    expect(page.json).toMatchObject({ content: "", has_more: false, next_cursor: null });
    expect(typeof page.json.version).toBe("string");
    expect(page.json.uri).toBe(`file://${dir}/empty.txt`);
  });

  it("repeating a cursor returns the same page", async () => {
    const first = await server.call("read", { path: "lines.txt", max_tokens: 200 });
    const a = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 200 });
    const b = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 200 });
    expect(a.text).toBe(b.text);
  });

  it("pages through a line range only", async () => {
    const pages = await readAllPages(server, { path: "lines.txt", offset: 10, limit: 300 }, 150);
    const expected = Array.from({ length: 300 }, (_, i) => `line ${i + 10}\n`).join("");
    expect(pages.map((p) => p.json.content).join("")).toBe(expected);
    expect(pages.length).toBeGreaterThan(3);
  });

  it("a line range past the end gives one empty page", async () => {
    const page = await server.call("read", { path: "lines.txt", offset: 5000, max_tokens: 100 });
    expect(page.json).toMatchObject({ content: "", has_more: false, next_cursor: null });
  });

  it("refuses invalid UTF-8 with NOT_TEXT and a base64 retry that reconstructs the bytes", async () => {
    const err = await server.call("read", { path: "latin1.bin", max_tokens: 100 });
    expect(err.isError).toBe(true);
    expect(err.json.error.code).toBe("NOT_TEXT");
    expect(err.json.error.retry.encoding).toBe("base64");
    expect(err.json.error.location.byte_offset).toBe(2);
    const pages = await readAllPages(server, { path: "latin1.bin", encoding: "base64" }, 90);
    const bytes = Buffer.concat(pages.map((p) => Buffer.from(p.json.content, "base64")));
    expect(bytes.equals(readFileSync(path.join(dir, "latin1.bin")))).toBe(true);
  });

  it("says BUDGET_TOO_SMALL with the smallest budget that works", async () => {
    const err = await server.call("read", { path: "seed.txt", max_tokens: 5 });
    expect(err.json.error.code).toBe("BUDGET_TOO_SMALL");
    const minimum = err.json.error.minimum_max_tokens;
    expect(minimum).toBeGreaterThan(5);
    const ok = await server.call("read", { path: "seed.txt", max_tokens: minimum });
    expect(ok.isError).toBe(false);
    expect(ok.json.content.length).toBeGreaterThan(0);
    const below = await server.call("read", { path: "seed.txt", max_tokens: minimum - 1 });
    expect(below.json.error.code).toBe("BUDGET_TOO_SMALL");
  });

  it("lowers a budget above the cap and says so", async () => {
    const page = await server.call("read", { path: "lines.txt", max_tokens: 10 ** 12 });
    expect(page.isError).toBe(false);
    expect(page.json.max_tokens).toBe(25000);
  });

  it("rejects bad numbers and cursor + offset with INVALID_ARGUMENT", async () => {
    for (const args of [
      { path: "lines.txt", max_tokens: 0 },
      { path: "lines.txt", max_tokens: -3 },
      { path: "lines.txt", max_tokens: 1.5 },
      { path: "lines.txt", offset: -1 },
      { path: "lines.txt", max_tokens: "ten" },
      { path: "lines.txt", bogus: true },
      {},
    ]) {
      const res = await server.call("read", args);
      expect(res.isError, JSON.stringify(args)).toBe(true);
      expect(res.json.error.code).toBe("INVALID_ARGUMENT");
    }
    const first = await server.call("read", { path: "lines.txt", max_tokens: 100 });
    const res = await server.call("read", { cursor: first.json.next_cursor, offset: 3 });
    expect(res.json.error.code).toBe("INVALID_ARGUMENT");
  });
});

describe("line mode", () => {
  it("returns lines exactly, terminators kept", async () => {
    const all = await server.call("read", { path: "crlf.txt" });
    expect(all.isError).toBe(false);
    expect(all.text).toBe("first\r\nsecond\r\n\r\nlone\rcr\nlast");
    const some = await server.call("read", { path: "crlf.txt", offset: 1, limit: 2 });
    expect(some.text).toBe("second\r\n\r\n");
    const tail = await server.call("read", { path: "crlf.txt", offset: 3 });
    expect(tail.text).toBe("lone\rcr\nlast");
  });

  it("refuses a selection over the ceiling with RESPONSE_TOO_LARGE", async () => {
    const res = await server.call("read", { path: "seed.txt" });
    expect(res.isError).toBe(true);
    expect(res.json.error.code).toBe("RESPONSE_TOO_LARGE");
    expect(res.json.error.retry.max_tokens).toBeGreaterThan(0);
  });
});

describe("versions", () => {
  let vdir: string;
  const body = VERSIONED_BODY;

  beforeAll(async () => {
    vdir = path.join(dir, "versions");
    // The files must have aged past the racy window, so the cheap identity path is what gets
    // tested; written first of all, they mostly have by now.
    await outOfRacyWindow(VERSIONED.map((name) => path.join(vdir, `${name}.txt`)));
  });

  async function firstPage(name: string) {
    const page = await server.call("read", { path: `versions/${name}.txt`, max_tokens: 300 });
    expect(page.json.has_more).toBe(true);
    return page;
  }

  it("continues an unchanged file with the same version", async () => {
    const first = await firstPage("steady");
    const next = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
    expect(next.isError).toBe(false);
    expect(next.json.version).toBe(first.json.version);
  });

  it("reports CONTENT_CHANGED after a rewrite with another size", async () => {
    const first = await firstPage("resize");
    writeFileSync(path.join(vdir, "resize.txt"), `${body}more`);
    const next = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
    expect(next.json.error.code).toBe("CONTENT_CHANGED");
    expect(next.json.content).toBeUndefined();
  });

  it("reports CONTENT_CHANGED after a same-size rewrite", async () => {
    const first = await firstPage("same");
    writeFileSync(path.join(vdir, "same.txt"), body.replace("0", "X"));
    const next = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
    expect(next.json.error.code).toBe("CONTENT_CHANGED");
  });

  it("reports CONTENT_CHANGED after a same-size rewrite with mtime put back", async () => {
    const file = path.join(vdir, "same-mtime.txt");
    const reference = path.join(vdir, "reference.tmp");
    execFileSync("cp", ["-p", file, reference]);
    const before = statSync(file, { bigint: true });
    const first = await firstPage("same-mtime");
    writeFileSync(file, body.replace("f", "F"));
    execFileSync("touch", ["-m", "-r", reference, file]);
    const after = statSync(file, { bigint: true });
    expect(after.mtimeNs).toBe(before.mtimeNs);
    expect(after.size).toBe(before.size);
    const next = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
    expect(next.json.error.code).toBe("CONTENT_CHANGED");
  });

  it("reports CONTENT_CHANGED after an atomic replace by rename", async () => {
    const first = await firstPage("rename");
    writeFileSync(path.join(vdir, "rename.tmp"), body.replace("1", "Y"));
    renameSync(path.join(vdir, "rename.tmp"), path.join(vdir, "rename.txt"));
    const next = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
    expect(next.json.error.code).toBe("CONTENT_CHANGED");
  });

  it("reports NOT_FOUND for a deleted file", async () => {
    const first = await firstPage("delete");
    unlinkSync(path.join(vdir, "delete.txt"));
    const next = await server.call("read", { cursor: first.json.next_cursor, max_tokens: 300 });
    expect(next.json.error.code).toBe("NOT_FOUND");
  });

  it("gives the same version for the same bytes on another server process", async () => {
    const first = await firstPage("steady");
    const other = await secondServer();
    const again = await other.call("read", { path: "versions/steady.txt", max_tokens: 300 });
    expect(again.json.version).toBe(first.json.version);
  });
});

describe("cursors", () => {
  async function cursorFor(name = "lines.txt"): Promise<string> {
    const page = await server.call("read", { path: name, max_tokens: 100 });
    return page.json.next_cursor;
  }

  it("are short", async () => {
    expect((await cursorFor()).length).toBeLessThanOrEqual(100);
  });

  it("reject tampering, junk and another path", async () => {
    const cursor = await cursorFor();
    const flip = (s: string, i: number) =>
      s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const junk = [
      "",
      "x",
      "!!!!",
      "a".repeat(5000),
      "AAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      cursor.slice(0, -2),
    ];
    // Not the last character: it may carry only padding bits, which decoding ignores.
    const forged = [
      flip(cursor, 5),
      flip(cursor, cursor.length - 2),
      flip(cursor, Math.floor(cursor.length / 2)),
    ];
    for (const c of [...junk, ...forged]) {
      const res = await server.call("read", { cursor: c, max_tokens: 100 });
      expect(res.isError, c).toBe(true);
      expect(["INVALID_CURSOR", "INVALID_ARGUMENT"]).toContain(res.json.error.code);
      if (c !== "") expect(res.json.error.code).toBe("INVALID_CURSOR");
    }
    const other = await server.call("read", { path: "crlf.txt", cursor, max_tokens: 100 });
    expect(other.json.error.code).toBe("INVALID_CURSOR");
    const same = await server.call("read", { path: "lines.txt", cursor, max_tokens: 100 });
    expect(same.isError).toBe(false);
  });

  it("survive a restart with a configured key, and fail plainly with another key", async () => {
    const cursor = await cursorFor();
    // Another process with the same key stands for the same server restarted: it knows nothing
    // of the cursor but what the cursor says.
    const res = await (await secondServer()).call("read", { cursor, max_tokens: 100 });
    expect(res.isError).toBe(false);
    const servers = await Promise.all([
      startServer(["--root", dir], { PAGEWISE_CURSOR_KEY: "another-key-0123456789abcdef" }),
      startServer(["--root", dir], { PAGEWISE_CURSOR_KEY: "" }),
    ]);
    try {
      const [stranger, ephemeral] = servers;
      const foreign = await stranger!.call("read", { cursor, max_tokens: 100 });
      expect(foreign.json.error.code).toBe("INVALID_CURSOR");
      const random = await ephemeral!.call("read", { cursor, max_tokens: 100 });
      expect(random.json.error.code).toBe("INVALID_CURSOR");
      expect(random.json.error.message).toMatch(/random per-process key/);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
});

describe("confinement", () => {
  let outside: { dir: string; cleanup: () => void };
  beforeAll(() => {
    outside = tempDir("pagewise-outside-");
    writeFileSync(path.join(outside.dir, "secret.txt"), "secret\n");
    symlinkSync(path.join(outside.dir, "secret.txt"), path.join(dir, "link-out.txt"));
    symlinkSync(outside.dir, path.join(dir, "dir-out"));
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "sub", "in.txt"), "inside\n");
    symlinkSync(path.join(dir, "sub", "in.txt"), path.join(dir, "link-in.txt"));
    execFileSync("mkfifo", [path.join(dir, "fifo")]);
  });
  afterAll(() => outside.cleanup());

  it("denies every way out", async () => {
    for (const p of [
      "../x.txt",
      `../${path.basename(outside.dir)}/secret.txt`,
      path.join(outside.dir, "secret.txt"),
      "/etc/passwd",
      "link-out.txt",
      "dir-out/secret.txt",
      // A link to a directory outside: denied, not described as a directory.
      "dir-out",
      "sub/\0/in.txt",
      `file://${outside.dir}/secret.txt`,
    ]) {
      for (const mode of [{}, { max_tokens: 100 }]) {
        const res = await server.call("read", { path: p, ...mode });
        expect(res.isError, p).toBe(true);
        expect(res.json.error.code, p).toBe("ACCESS_DENIED");
        // The error names the root the caller may read, so the agent can correct its path.
        expect(res.json.error.message, p).toContain(JSON.stringify(dir));
      }
    }
  });

  it("follows links that stay inside, and accepts absolute paths and file URIs inside", async () => {
    for (const p of [
      "link-in.txt",
      "sub/../sub/in.txt",
      path.join(dir, "sub/in.txt"),
      `file://${dir}/sub/in.txt`,
    ]) {
      const res = await server.call("read", { path: p });
      expect(res.text, p).toBe("inside\n");
    }
  });

  it("refuses a FIFO without blocking, and directories", async () => {
    const fifo = await server.call("read", { path: "fifo", max_tokens: 100 });
    expect(fifo.json.error.code).toBe("NOT_A_FILE");
    const fifoLines = await server.call("read", { path: "fifo" });
    expect(fifoLines.json.error.code).toBe("NOT_A_FILE");
    const directory = await server.call("read", { path: "sub" });
    expect(directory.json.error.code).toBe("NOT_A_FILE");
    const missing = await server.call("read", { path: "nope.txt" });
    expect(missing.json.error.code).toBe("NOT_FOUND");
  });
});

describe("the server process", () => {
  it("lists read with read-only annotations", async () => {
    const { tools } = await server.client.listTools();
    const read = tools.find((t) => t.name === "read")!;
    expect(read.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(read.inputSchema.properties).toHaveProperty("max_tokens");
  });

  it("keeps stdout for JSON-RPC only and logs on stderr", async () => {
    const child = spawn(process.execPath, ["bin/pagewise.js", "serve", "--root", dir], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stdin.end();
    await new Promise((r) => child.on("exit", r));
    expect(out).toBe("");
  });
});

describe("exact estimators", () => {
  it("fits o200k pages by the real count, filled, and rebuilds the file", async () => {
    const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
    const text = `${SEED_LINE.slice(0, 20000)}\n${"const value = compute(input, { depth: 3 }); // note\n".repeat(300)}`;
    writeFileSync(path.join(dir, "exact.txt"), text);
    const exact = await startServer(["--root", dir, "--estimator", "o200k"]);
    try {
      const pages = await readAllPages(exact, { path: "exact.txt" }, 500);
      expect(pages.map((p) => p.json.content).join("")).toBe(text);
      for (const [i, page] of pages.entries()) {
        const tokens = countTokens(page.text);
        expect(tokens).toBeLessThanOrEqual(500);
        if (i < pages.length - 1) expect(tokens).toBeGreaterThanOrEqual(0.85 * 500);
      }
    } finally {
      await exact.close();
    }
  });
});
