/**
 * `tail` end to end over stdio with the SDK client, as an agent drives it: a 25,000-line log read
 * from the end and walked back to the start, appends while paging, a 1 MB line read through its
 * line cursor, and truncation / rotation / same-size rewrites rejected as CONTENT_CHANGED.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEstimator } from "../dist/core/index.js";
import { runCli } from "./support/cli.js";
import { type ServerHandle, startServer, tempDir } from "./support/server.js";

const LEVELS = ["INFO", "DEBUG", "WARN", "ERROR"];

function logLine(i: number): string {
  return `2026-11-${String(1 + (i % 28)).padStart(2, "0")}T12:${String(i % 60).padStart(2, "0")}:00Z ${LEVELS[i % 4]} worker-${i % 17} request ${i} handled "ok" in ${i % 997}ms`;
}

describe("tail over stdio", () => {
  let server: ServerHandle;
  let dir: string;
  let cleanup: () => void;
  let count: (text: string) => number;
  // 1.8 MB: the walk back to the start crosses all 28 of the reader's 64 KiB blocks in some 160
  // pages; a page reads only the blocks of its records wherever it is, so a longer log would
  // only add pages of the same kind.
  const lines = Array.from({ length: 25_000 }, (_, i) => logLine(i));

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir());
    writeFileSync(path.join(dir, "app.log"), `${lines.join("\n")}\n`);
    server = await startServer(["--root", dir, "--search-stall-ms", "1500"]);
    const estimator = await createEstimator("default");
    count = (t) => estimator.count(t);
  });
  afterAll(async () => {
    await server?.close();
    cleanup?.();
  });

  it("lists the tool with read-only annotations", async () => {
    const { tools } = await server.client.listTools();
    const tail = tools.find((t) => t.name === "tail");
    expect(tail?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  });

  it("the default call returns the newest lines, ending with the last one, within budget", async () => {
    const page = await server.call("tail", { path: "app.log" });
    expect(page.isError).toBe(false);
    expect(page.blocks).toBe(1);
    expect(page.structured).toBeUndefined();
    expect(count(page.text)).toBeLessThanOrEqual(8000);
    const texts = page.json.items.map((i: { text: string }) => i.text);
    expect(texts).toEqual(lines.slice(-texts.length));
    expect(texts.length).toBe(50);
    expect(page.json.has_earlier).toBe(true);
    expect(page.json.has_later).toBe(false);
    expect(page.json.earlier_cursor.length).toBeLessThanOrEqual(100);
    expect(page.json.later_cursor.length).toBeLessThanOrEqual(100);
  });

  it("walking before to the start reconstructs every line exactly once, in order, every page in budget", async () => {
    const maxTokens = 8000;
    const pages: Array<Array<{ position: number; text: string }>> = [];
    let page = await server.call("tail", { path: "app.log", max_tokens: maxTokens, limit: 1000 });
    for (;;) {
      expect(page.isError).toBe(false);
      expect(count(page.text)).toBeLessThanOrEqual(maxTokens);
      expect(page.json.items.length).toBeGreaterThan(0);
      pages.push(page.json.items);
      if (!page.json.has_earlier) break;
      expect(pages.length).toBeLessThan(5000);
      page = await server.call("tail", {
        before: page.json.earlier_cursor,
        max_tokens: maxTokens,
        limit: 1000,
      });
    }
    expect(page.json.earlier_cursor).toBeNull();
    const items = pages.reverse().flat();
    expect(items.map((i) => i.text)).toEqual(lines);
    let offset = 0;
    items.forEach((item, i) => {
      expect(item.position).toBe(offset);
      offset += Buffer.byteLength(lines[i]!) + 1;
    });
  });

  it("appends while paging: after returns exactly the appended lines; old before cursors still work", async () => {
    writeFileSync(path.join(dir, "live.log"), `${lines.slice(0, 5000).join("\n")}\n`);
    const first = await server.call("tail", { path: "live.log", max_tokens: 2000 });
    const second = await server.call("tail", {
      before: first.json.earlier_cursor,
      max_tokens: 2000,
    });
    const added = Array.from({ length: 300 }, (_, i) => `appended ${i} ${logLine(i)}`);
    appendFileSync(path.join(dir, "live.log"), `${added.slice(0, 100).join("\n")}\n`);
    const again = await server.call("tail", {
      before: first.json.earlier_cursor,
      max_tokens: 2000,
    });
    expect(again.isError).toBe(false);
    // The same records before the cursor (the count may differ with the new cursors' lengths).
    const [short, long] =
      again.json.items.length <= second.json.items.length
        ? [again.json.items, second.json.items]
        : [second.json.items, again.json.items];
    expect(short.length).toBeGreaterThan(0);
    expect(long.slice(long.length - short.length)).toEqual(short);
    appendFileSync(path.join(dir, "live.log"), `${added.slice(100).join("\n")}\n`);
    const caught: string[] = [];
    let page = await server.call("tail", { after: first.json.later_cursor, max_tokens: 2000 });
    for (;;) {
      expect(page.isError).toBe(false);
      expect(count(page.text)).toBeLessThanOrEqual(2000);
      caught.push(...page.json.items.map((i: { text: string }) => i.text));
      if (!page.json.has_later) break;
      page = await server.call("tail", { after: page.json.later_cursor, max_tokens: 2000 });
    }
    expect(caught).toEqual(added);
    // The old earlier cursor of the second page still walks back.
    const third = await server.call("tail", {
      before: second.json.earlier_cursor,
      max_tokens: 2000,
    });
    expect(third.isError).toBe(false);
    expect(third.json.items.at(-1).position).toBeLessThan(second.json.items[0].position);
    // Nothing new: an empty page that keeps its later cursor usable.
    const idle = await server.call("tail", { after: page.json.later_cursor, max_tokens: 2000 });
    expect(idle.json.items).toEqual([]);
    expect(idle.json.has_later).toBe(false);
  });

  it("a 1 MB single line in the middle comes back clamped; its line_cursor reads it exactly", async () => {
    const big = Array.from(
      { length: 1_000_000 / 16 },
      (_, i) => `{"k":${String(i).padStart(9, "0")}} `,
    ).join("");
    expect(big.length).toBe(1_000_000);
    const content = `${lines.slice(0, 2000).join("\n")}\n${big}\n${lines.slice(2000, 4000).join("\n")}\n`;
    writeFileSync(path.join(dir, "big.log"), content);
    let found: { text: string; truncated?: boolean; line_cursor?: string } | undefined;
    let page = await server.call("tail", { path: "big.log", max_tokens: 3000, limit: 1000 });
    while (!found) {
      expect(page.isError).toBe(false);
      expect(count(page.text)).toBeLessThanOrEqual(3000);
      found = page.json.items.find((i: { truncated?: boolean }) => i.truncated);
      if (!page.json.has_earlier) break;
      page = await server.call("tail", {
        before: page.json.earlier_cursor,
        max_tokens: 3000,
        limit: 1000,
      });
    }
    expect(found?.truncated).toBe(true);
    expect(found!.text.length).toBeLessThanOrEqual(2000);
    expect(big.startsWith(found!.text)).toBe(true);
    // Appends do not invalidate the line cursor.
    appendFileSync(path.join(dir, "big.log"), "later\n");
    let text = "";
    let cursor: string | null = found!.line_cursor!;
    let last: any;
    while (cursor) {
      last = await server.call("read", { cursor, max_tokens: 25_000 });
      expect(last.isError).toBe(false);
      expect(count(last.text)).toBeLessThanOrEqual(25_000);
      text += last.json.content;
      cursor = last.json.next_cursor;
    }
    expect(last.json.has_more).toBe(false);
    expect(text).toBe(big);
  });

  it("truncate, rotate (rename + new file with the same content), same-size rewrite: CONTENT_CHANGED", async () => {
    const content = `${lines.slice(0, 20_000).join("\n")}\n`;
    const changes: Record<string, (file: string) => void> = {
      truncate: (file) => truncateSync(file, 1000),
      rotate: (file) => {
        renameSync(file, `${file}.1`);
        writeFileSync(file, content);
      },
      rewrite: (file) => writeFileSync(file, content.replace("INFO", "info")),
    };
    for (const [what, change] of Object.entries(changes)) {
      const name = `${what}.log`;
      writeFileSync(path.join(dir, name), content);
      const first = await server.call("tail", {
        path: name,
        max_tokens: 1000,
        max_chars_per_item: 20,
      });
      expect(first.isError).toBe(false);
      await new Promise((r) => setTimeout(r, 20));
      change(path.join(dir, name));
      for (const args of [
        { before: first.json.earlier_cursor },
        { after: first.json.later_cursor },
      ]) {
        const next = await server.call("tail", { ...args, max_tokens: 1000 });
        expect(next.isError, `${what} ${Object.keys(args)[0]}: ${next.text.slice(0, 300)}`).toBe(
          true,
        );
        expect(next.json.error.code).toBe("CONTENT_CHANGED");
        expect(next.json.error.message).toMatch(/without a cursor/);
      }
      const line = await server.call("read", {
        cursor: first.json.items.at(-1).line_cursor,
        max_tokens: 500,
      });
      expect(line.json?.error?.code, `${what} line_cursor: ${line.text.slice(0, 300)}`).toBe(
        "CONTENT_CHANGED",
      );
    }
  });

  it("grep over stdio keeps the budget and the cursor keeps the filter", async () => {
    const page = await server.call("tail", {
      path: "app.log",
      grep: "ERROR worker-3 ",
      max_tokens: 800,
    });
    expect(page.isError).toBe(false);
    expect(count(page.text)).toBeLessThanOrEqual(800);
    const want = lines.filter((l) => / ERROR worker-3 /.test(l));
    const texts = page.json.items.map((i: { text: string }) => i.text);
    expect(texts).toEqual(want.slice(-texts.length));
    const next = await server.call("tail", { before: page.json.earlier_cursor, max_tokens: 800 });
    const more = next.json.items.map((i: { text: string }) => i.text);
    expect(more).toEqual(want.slice(-texts.length - more.length, -texts.length));
  });

  /** A slow `tail` call and a quick one sent together: both results, and the order they came in. */
  async function alongsideAnother(args: Record<string, unknown>) {
    const order: string[] = [];
    const answered = (name: string) => (r: Awaited<ReturnType<ServerHandle["call"]>>) => {
      order.push(name);
      return r;
    };
    const [slow, other] = await Promise.all([
      server.call("tail", args).then(answered("slow")),
      server.call("tail", { path: "app.log", limit: 1 }).then(answered("other")),
    ]);
    return { slow, other, order };
  }

  it("hostile grep patterns never stall the server: the linear-time engine answers, a V8-only one is stopped", async () => {
    writeFileSync(path.join(dir, "x.log"), `start\n${"a".repeat(40)}b\n`);
    const linear = await server.call("tail", { path: "x.log", grep: "/(a+)+$/" });
    expect(linear.isError, linear.text).toBe(false);
    const rescued = await server.call("tail", { path: "x.log", grep: "(a+)+b$" });
    expect(rescued.json.items.map((i: { text: string }) => i.text)).toEqual([`${"a".repeat(40)}b`]);
    // Lookahead only V8 can run: in a guarded worker; other calls are answered meanwhile.
    const { slow, other, order } = await alongsideAnother({ path: "x.log", grep: "(?=a)(a+)+$" });
    expect(other.isError).toBe(false);
    expect(slow.json.error.code).toBe("RESOURCE_LIMIT_EXCEEDED");
    expect(slow.json.error.limit.name).toBe("search_stall_ms");
    expect(order).toEqual(["other", "slow"]);
  }, 60_000);

  it("runs a linear-engine grep whose work is large in the guarded worker, not on the serving thread", async () => {
    // `(a|aa){0,500}z` over 300,000 characters: seconds of the linear-time engine on the thread that serves
    // requests. In the worker, V8 backtracks on it and the guard stops it; other calls go on.
    writeFileSync(path.join(dir, "long.log"), `start\n${"a".repeat(300_000)}\n`);
    const { slow, other, order } = await alongsideAnother({
      path: "long.log",
      grep: "(a|aa){0,500}z",
    });
    expect(other.isError).toBe(false);
    expect(slow.json.error.code).toBe("RESOURCE_LIMIT_EXCEEDED");
    expect(slow.json.error.limit.name).toBe("search_stall_ms");
    expect(order).toEqual(["other", "slow"]);
    // A short record with the same pattern is tested on the serving thread, by the linear-time engine.
    writeFileSync(path.join(dir, "short.log"), `start\n${"a".repeat(40)}z\n`);
    const short = await server.call("tail", { path: "short.log", grep: "(a|aa){0,500}z" });
    expect(short.json.items.map((i: { text: string }) => i.text)).toEqual([`${"a".repeat(40)}z`]);
  }, 60_000);

  it("refuses what is not a readable file inside the roots; lowers and reports limit", async () => {
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    for (const [args, code] of [
      [{ path: "pipe" }, "NOT_A_FILE"],
      [{ path: "." }, "NOT_A_FILE"],
      [{ path: "../outside.log" }, "ACCESS_DENIED"],
      [{ path: "missing.log" }, "NOT_FOUND"],
      [{ path: "app.log", limit: 0 }, "INVALID_ARGUMENT"],
      [{ path: "app.log", before: "garbage" }, "INVALID_CURSOR"],
    ] as const) {
      const page = await server.call("tail", args);
      expect(page.isError, JSON.stringify(args)).toBe(true);
      expect(page.json.error.code).toBe(code);
    }
    const page = await server.call("tail", {
      path: "app.log",
      limit: 5000,
      max_tokens: 10_000_000,
    });
    expect(page.json.limit).toBe(1000);
    expect(page.json.max_tokens).toBe(25_000);
    // At the default cap of 25,000 tokens the budget, not the limit, ends this page.
    expect(page.json.items.length).toBeGreaterThan(100);
    expect(page.json.items.length).toBeLessThanOrEqual(1000);
    expect(page.json.has_earlier).toBe(true);
  });

  it("CLI: pagewise tail FILE --grep P --before C prints the same JSON pages", async () => {
    const options = { cwd: dir, env: { PAGEWISE_CURSOR_KEY: "tail-e2e-test-key-0123456789" } };
    const first = await runCli(
      ["tail", "app.log", "--root", dir, "--max-tokens", "500", "--grep", "WARN", "--json"],
      options,
    );
    expect(first.status, first.stderr).toBe(0);
    const page = JSON.parse(first.stdout);
    expect(page.items.at(-1).text).toBe(lines.filter((l) => l.includes("WARN")).at(-1));
    const second = await runCli(
      ["tail", "--root", dir, "--max-tokens", "500", "--before", page.earlier_cursor, "--json"],
      options,
    );
    expect(second.status, second.stderr).toBe(0);
    const next = JSON.parse(second.stdout);
    expect(next.items.at(-1).position).toBeLessThan(page.items[0].position);
    expect(next.items.every((i: { text: string }) => i.text.includes("WARN"))).toBe(true);
  });
});
