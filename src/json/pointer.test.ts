import { describe, expect, test } from "vitest";
import { parsePointer } from "./pointer.js";
import { compileQuery, runQuery } from "./query.js";
import { enc, matches } from "./test-support/helpers.js";

const RFC_DOC = `{
  "foo": ["bar", "baz"],
  "": 0,
  "a/b": 1,
  "c%d": 2,
  "e^f": 3,
  "g|h": 4,
  "i\\\\j": 5,
  "k\\"l": 6,
  " ": 7,
  "m~n": 8
}`;

async function at(pointer: string, doc = RFC_DOC): Promise<string[]> {
  return (await matches(doc, pointer, { language: "pointer" })).map((m) =>
    m.slice(m.indexOf("=") + 1),
  );
}

describe("RFC 6901", () => {
  test("section 5 examples (JSON string form)", async () => {
    expect(JSON.parse((await at(""))[0])).toEqual(JSON.parse(RFC_DOC));
    expect(await at("/foo")).toEqual(['["bar","baz"]']);
    expect(await at("/foo/0")).toEqual(['"bar"']);
    expect(await at("/")).toEqual(["0"]);
    expect(await at("/a~1b")).toEqual(["1"]);
    expect(await at("/c%d")).toEqual(["2"]);
    expect(await at("/e^f")).toEqual(["3"]);
    expect(await at("/g|h")).toEqual(["4"]);
    expect(await at("/i\\j")).toEqual(["5"]);
    expect(await at('/k"l')).toEqual(["6"]);
    expect(await at("/ ")).toEqual(["7"]);
    expect(await at("/m~0n")).toEqual(["8"]);
  });

  test("section 6 examples (URI fragment form)", async () => {
    expect(JSON.parse((await at("#"))[0])).toEqual(JSON.parse(RFC_DOC));
    expect(await at("#/foo")).toEqual(['["bar","baz"]']);
    expect(await at("#/foo/0")).toEqual(['"bar"']);
    expect(await at("#/")).toEqual(["0"]);
    expect(await at("#/a~1b")).toEqual(["1"]);
    expect(await at("#/c%25d")).toEqual(["2"]);
    expect(await at("#/e%5Ef")).toEqual(["3"]);
    expect(await at("#/g%7Ch")).toEqual(["4"]);
    expect(await at("#/i%5Cj")).toEqual(["5"]);
    expect(await at("#/k%22l")).toEqual(["6"]);
    expect(await at("#/%20")).toEqual(["7"]);
    expect(await at("#/m~0n")).toEqual(["8"]);
    expect(await at("#/%C3%A9", '{"é": 9}')).toEqual(["9"]);
  });

  test("array indexes, '-' and members named like numbers", async () => {
    const doc = '{"a": [10, 20], "0": "zero", "01": "x"}';
    expect(await at("/a/1", doc)).toEqual(["20"]);
    expect(await at("/a/2", doc)).toEqual([]);
    expect(await at("/a/-", doc)).toEqual([]);
    expect(await at("/a/01", doc)).toEqual([]);
    expect(await at("/0", doc)).toEqual(['"zero"']);
    expect(await at("/01", doc)).toEqual(['"x"']);
    expect(await at("/missing/deeper", doc)).toEqual([]);
  });

  test("~ escapes are decoded ~1 first, then ~0", () => {
    expect(parsePointer("/~01")).toEqual(["~1"]);
    expect(parsePointer("/a//b")).toEqual(["a", "", "b"]);
  });

  test.each(["a", "/~2", "/~", "#a", "#/%zz", "#/%C3"])("rejects %j", (p) => {
    expect(() => compileQuery("pointer", p)).toThrow(
      expect.objectContaining({ code: "QUERY_SYNTAX_ERROR" }),
    );
  });

  test("evaluation stops as soon as the target value is complete", async () => {
    const items = Array.from({ length: 50000 }, (_, i) => ({ i }));
    const bytes = enc.encode(JSON.stringify({ head: { x: [1, 2] }, items }));
    let read = 0;
    const reader = {
      size: bytes.length,
      async read(position: number, length: number) {
        const out = bytes.subarray(position, position + length);
        read += out.length;
        return out;
      },
    };
    const out: string[] = [];
    for await (const m of runQuery(reader, "json", compileQuery("pointer", "/head/x")))
      out.push(m.pointer);
    expect(out).toEqual(["/head/x"]);
    expect(read).toBeLessThanOrEqual(64 * 1024);
    expect(bytes.length).toBeGreaterThan(4 * 64 * 1024);
  });
});
