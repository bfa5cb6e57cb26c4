/**
 * Names of Object.prototype's properties (`constructor`, `__proto__`, `toString`, `hasOwnProperty`…)
 * in any casing, thrown at every tool wherever a caller's string goes: as argument names, as the
 * values of string arguments, as JSON member names, JSONPath names and functions, pointer tokens
 * and file names. A lookup on a plain object keyed by such a string reaches Object.prototype; the
 * answer must be a page or a structured error a caller can act on, never INTERNAL_ERROR.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../src/tools/index.js";
import { type InMemoryServer, startInMemory } from "./support/in-memory.js";
import { tempDir } from "./support/server.js";

const NAMES = [...Object.getOwnPropertyNames(Object.prototype), "prototype"];

/** A prototype name with each letter's case drawn at random. */
const anyCase = fc
  .constantFrom(...NAMES)
  .chain((name) =>
    fc
      .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
      .map((upper) =>
        [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(""),
      ),
  );

/** Arguments that work for each tool on the fixture, before a name is thrown in. */
const BASE: Record<string, Record<string, unknown>> = {
  read: { path: "notes.txt", max_tokens: 500 },
  list: { path: ".", recursive: true },
  search: { pattern: "line", path: "." },
  tail: { path: "notes.txt" },
  json_open: { path: "doc.json" },
  json_read: { path: "doc.json", language: "jsonpath", query: "$.*" },
  json_close: { file_id: "f1" },
};

/** Where a caller's string can go, with `name` put there. */
function placements(tool: string, name: string): Record<string, unknown>[] {
  const base = BASE[tool]!;
  const out: Record<string, unknown>[] = [
    JSON.parse(JSON.stringify({ ...base, [name]: 1 })),
    JSON.parse(`{${JSON.stringify(name)}: "x", "path": "notes.txt"}`),
  ];
  for (const [key, value] of Object.entries(base))
    if (typeof value === "string") out.push({ ...base, [key]: name });
  if (tool === "read" || tool === "tail") out.push({ ...base, path: name });
  if (tool === "search") out.push({ ...base, pattern: name, glob: name }, { ...base, path: name });
  if (tool === "tail") out.push({ ...base, grep: name }, { ...base, cursor: name });
  if (tool === "list") out.push({ ...base, glob: `**/${name}` });
  if (tool === "json_read") {
    for (const query of [
      `$.${name}`,
      `$['${name}']`,
      `$..${name}`,
      `$[?${name}(@)]`,
      `$[?@.${name}]`,
      `$[?length(@.${name}) > 0]`,
    ])
      out.push({ ...base, query });
    out.push({ ...base, language: "pointer", query: `/${name}` });
    out.push({ ...base, language: "pointer", query: `/${name}/a` });
    out.push({ ...base, path: "rows.jsonl", query: `$[*].${name}` });
    out.push({ ...base, format: name }, { file_id: name, language: "jsonpath", query: "$" });
  }
  return out;
}

describe("names of Object.prototype's properties", () => {
  let server: InMemoryServer;
  let cleanup: () => void;
  beforeAll(async () => {
    let dir: string;
    ({ dir, cleanup } = tempDir("pagewise-proto-"));
    writeFileSync(path.join(dir, "notes.txt"), "line one\nline constructor\nline __proto__\n");
    writeFileSync(
      path.join(dir, "doc.json"),
      '{"__proto__":{"a":1},"constructor":2,"toString":[1],"hasOwnProperty":{"x":"y"},"valueOf":null}',
    );
    writeFileSync(path.join(dir, "rows.jsonl"), '{"constructor":1}\n{"__proto__":{"a":2}}\n');
    for (const name of ["constructor", "__proto__", "toString"]) {
      writeFileSync(path.join(dir, name), `line ${name}\n`);
      mkdirSync(path.join(dir, `dir-${name}`));
      writeFileSync(path.join(dir, `dir-${name}`, name), `line ${name}\n`);
    }
    server = await startInMemory([dir]);
  });
  afterAll(async () => {
    await server?.close();
    cleanup?.();
  });

  /** Every placement of `name` in a call of `tool`: never INTERNAL_ERROR. */
  async function check(tool: string, name: string): Promise<void> {
    for (const args of placements(tool, name)) {
      const outcome = await server.call(tool, args);
      if (outcome.isError)
        expect(
          outcome.json.error.code,
          `${tool} ${JSON.stringify(args)}: ${outcome.text}`,
        ).not.toBe("INTERNAL_ERROR");
    }
  }

  it("as spelled, in every place of every tool: a page or an actionable error, never INTERNAL_ERROR", async () => {
    for (const tool of TOOLS) for (const name of NAMES) await check(tool.name, name);
  });

  it("in any casing: a page or an actionable error, never INTERNAL_ERROR", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TOOLS.map((t) => t.name)), anyCase, check),
      { numRuns: 60 },
    );
  });

  it("find members, files and arguments named like them as they would any other name", async () => {
    const members = await server.call("json_read", {
      path: "doc.json",
      language: "jsonpath",
      query: "$['__proto__','constructor','toString']",
    });
    expect(members.json.items).toEqual([
      { path: "/__proto__", value: { a: 1 } },
      { path: "/constructor", value: 2 },
      { path: "/toString", value: [1] },
    ]);
    const file = await server.call("read", { path: "__proto__", max_tokens: 500 });
    expect(file.json.content).toBe("line __proto__\n");
    const unknown = await server.call("list", { constructor: 1 });
    expect(unknown.json.error.code).toBe("INVALID_ARGUMENT");
    expect(unknown.json.error.message).toContain('"constructor" is not an argument here');
    const fn = await server.call("json_read", {
      path: "doc.json",
      language: "jsonpath",
      query: "$[?constructor(@)]",
    });
    expect(fn.json.error.code).toBe("QUERY_SYNTAX_ERROR");
  });
});
