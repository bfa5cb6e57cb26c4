/**
 * A walk of json_read pages continues the engine its last page stopped (continuations.ts): the
 * same pages as resuming from each cursor, with one file open for the whole walk instead of one
 * per page, and nothing kept for a second call with the same cursor or another caller.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { descriptorCloses } from "../../access/descriptor.js";
import { MAX_TOKENS_PARAM, runSource } from "../../core/index.js";
import type { SourceContext } from "../shared/context.js";
import { tempSourceContext } from "../shared/test-support/context.js";
import { JsonHandles } from "./handles.js";
import { createJsonReadSource } from "./read.js";

let dir: string;
let ctx: SourceContext;
let cleanup: () => void;
const RECORDS = 300;

beforeAll(() => {
  ({ dir, ctx, cleanup } = tempSourceContext("pagewise-continuations-"));
  const lines = Array.from(
    { length: RECORDS },
    (_, i) => `{"id": ${i}, "tags": ["t${i % 3}", "u"], "n": {"v": ${i * 7}}}`,
  );
  writeFileSync(path.join(dir, "r.jsonl"), `${lines.join("\n")}\n`);
});
afterAll(() => cleanup?.());

const closes = () => descriptorCloses.inPlace + descriptorCloses.inPool;

/** Every page of `query`, each cursor used `uses` times (the pages of each use must agree). */
async function walk(handles: JsonHandles, query: string, maxItems: number, uses: number) {
  const source = createJsonReadSource({
    maxTokens: { ...MAX_TOKENS_PARAM, default: 6000, max: 25_000 },
    handles,
  });
  const run = { codec: ctx.codec, identity: ctx.caller.identity, context: ctx };
  const pages: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const args = cursor ? {} : { path: "r.jsonl", language: "jsonpath" as const, query };
    const given = { max_tokens: undefined, max_items: cursor ? undefined : maxItems };
    const texts: string[] = [];
    for (let u = 0; u < uses; u++) texts.push(await runSource(source, run, args, cursor, given));
    // Cursors may differ in the version's identity fingerprint: a file opened in its racy window
    // (just written) has none yet, and a kept engine keeps the version it opened the file at.
    const uncursored = (text: string) => text.replace(/"next_cursor":"[^"]*"/, "");
    expect(uncursored(texts.at(-1)!), `${query} ${maxItems}`).toBe(uncursored(texts[0]!));
    pages.push(texts[0]!);
    const page = JSON.parse(texts[0]!);
    if (page.complete) return pages;
    cursor = page.next_cursor;
  }
}

describe("json_read continuations", () => {
  it("give the pages a resume from each cursor gives, whatever the query and page size", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("$[*].id", "$..v", "$[*].tags[*]", "$[?@.id < 40 || @.n.v > 1500]", "$[*]"),
        fc.integer({ min: 1, max: 40 }),
        async (query, maxItems) => {
          const kept = await walk(new JsonHandles(), query, maxItems, 1);
          const resumed = await walk(new JsonHandles(), query, maxItems, 2);
          const uncursored = (text: string) => text.replace(/"next_cursor":"[^"]*"/, "");
          expect(kept.map(uncursored)).toEqual(resumed.map(uncursored));
        },
      ),
      { numRuns: 12 },
    );
  });

  it("open the file once for a walk, where resuming opens it once per page", async () => {
    const handles = new JsonHandles();
    const before = closes();
    const pages = await walk(handles, "$[*].id", 10, 1);
    expect(pages.length).toBe(RECORDS / 10);
    await new Promise((resolve) => setTimeout(resolve, 50)); // closes run in the background
    expect(closes() - before).toBeLessThanOrEqual(2);
    expect(handles.continuations.size).toBe(0);
    const again = closes();
    await walk(new JsonHandles(), "$[*].id", 10, 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closes() - again).toBeGreaterThanOrEqual(RECORDS / 10);
  });
});
