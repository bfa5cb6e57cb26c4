/**
 * tail's `grep`: a regular expression with smart case (not a substring), `grep_literal` for plain
 * text, both kept by the cursor, and hostile patterns answered by the linear-time engine.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPagewiseError } from "../../core/index.js";
import type { SourceContext } from "../shared/context.js";
import { tempSourceContext } from "../shared/test-support/context.js";
import { compileGrep } from "./grep.js";
import { type TailRequest, tailPage } from "./test-support/call.js";

let dir: string;
let ctx: SourceContext;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, ctx, cleanup } = tempSourceContext("pagewise-grep-"));
});
afterAll(() => cleanup());

interface Page {
  items: Array<{ text: string }>;
  earlier_cursor: string | null;
  grep_literal?: boolean;
}
async function tail(req: Partial<TailRequest>): Promise<Page> {
  return JSON.parse(
    await tailPage(ctx, { limit: 1000, maxCharsPerItem: 2000, maxTokens: 8000, ...req }),
  );
}
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "none";
  } catch (err) {
    return isPagewiseError(err) ? err.code : `not a PagewiseError: ${err}`;
  }
}

describe("tail grep", () => {
  const lines = Array.from({ length: 12_000 }, (_, i) =>
    i % 7 === 0 ? `level=error seq=${i} a.b` : `level=info seq=${i} axb`,
  );
  beforeAll(() => writeFileSync(path.join(dir, "app.log"), `${lines.join("\n")}\n`));

  it("is a regular expression: a character class is not matched as text", async () => {
    const page = await tail({ path: "app.log", grep: "level=error seq=999[0-9]" });
    expect(page.items.map((i) => i.text)).toEqual(
      lines.filter((l) => /level=error seq=999[0-9]\b/.test(l) && /seq=\d{4} /.test(l)),
    );
    expect(page.items.length).toBeGreaterThan(0);
  });

  it("smart case: lower case folds, an upper-case letter makes it exact", () => {
    const lower = compileGrep("error", false);
    const upper = compileGrep("Error", false);
    expect([lower("ERROR x"), upper("ERROR x"), upper("Error x")]).toEqual([true, false, true]);
  });

  it("grep_literal matches plain text; the cursor keeps it, and a different one is refused", async () => {
    const regex = await tail({ path: "app.log", grep: "a.b" });
    // As a regex, "." matches the x of "axb" too: every line is kept.
    const texts = regex.items.map((i) => i.text);
    expect(texts).toEqual(lines.slice(-texts.length));
    const first = await tail({ path: "app.log", grep: "a.b", grepLiteral: true, maxTokens: 600 });
    expect(first.grep_literal).toBe(true);
    const next = await tail({ before: first.earlier_cursor!, maxTokens: 600 });
    const want = lines.filter((l) => l.includes("a.b"));
    const got = [...next.items, ...first.items].map((i) => i.text);
    expect(got).toEqual(want.slice(-got.length));
    expect(await codeOf(tail({ before: first.earlier_cursor!, grepLiteral: false }))).toBe(
      "INVALID_ARGUMENT",
    );
  });

  it("a catastrophic pattern runs in linear time: (a+)+$ over 30 a's and a b", async () => {
    writeFileSync(path.join(dir, "x.log"), `start\n${"a".repeat(30)}b\n${"a".repeat(50)}\n`);
    const page = await tail({ path: "x.log", grep: "(a+)+$" });
    expect(page.items.map((i) => i.text)).toEqual(["a".repeat(50)]);
  });

  it("invalid patterns name grep and grep_literal", async () => {
    const err = await tail({ path: "app.log", grep: "([" }).catch((e) => e);
    expect(isPagewiseError(err) && err.code).toBe("INVALID_ARGUMENT");
    expect(String(err.message)).toContain("grep");
    expect(JSON.stringify(err.details)).toContain("grep_literal");
  });
});

describe("a grep nested too deep", () => {
  it("is INVALID_ARGUMENT naming grep and max_pattern_nesting, not a stack overflow", async () => {
    writeFileSync(path.join(dir, "deep.log"), "a\nb\n");
    for (const open of ["(", "(?:"]) {
      const grep = `${open.repeat(3001)}a${")".repeat(3001)}`;
      try {
        await tail({ path: "deep.log", grep });
        expect.unreachable(open);
      } catch (err) {
        expect(isPagewiseError(err) && err.code).toBe("INVALID_ARGUMENT");
        expect((err as Error).message).toContain("grep");
        expect(isPagewiseError(err) && err.details.limit?.name).toBe("max_pattern_nesting");
      }
    }
  });
});
