import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compileQuery, runQuery } from "./query.js";
import type { ByteReader } from "./reader.js";
import { decodeResume, encodeResume, type ResumeState } from "./resume.js";
import { enc, runAll } from "./test-support/helpers.js";

const NAMES = ["a", "b", "c"];
type J = null | boolean | number | string | J[] | { [k: string]: J };
const doc: fc.Arbitrary<J> = fc.letrec<{ value: J }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom("x", "é"), fc.constant(null)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc
      .uniqueArray(
        fc.tuple(
          fc.constantFrom(...NAMES, "a long member name that is stored by reference"),
          tie("value"),
        ),
        {
          maxLength: 4,
          selector: (t) => t[0],
        },
      )
      .map((pairs) => Object.fromEntries(pairs)),
  ),
})).value;

const QUERIES = [
  "$[*]",
  "$..*",
  "$..a",
  "$.a[*]",
  "$[*].a",
  "$[*][*]",
  "$..[0]",
  "$[-1]",
  "$[::-1]",
  "$[1:]",
  "$[:-1]",
  "$['b','a']",
  "$[?@.a]",
  "$..[?@ == 1]",
  "$[*][?@ > 0]",
  "$..a..b",
  "$[0,0]",
  "$.*.*.*",
];

/** A reader that remembers the lowest position it was asked for. */
function trackingReader(
  bytes: Uint8Array,
  from = 0,
): ByteReader & { before: number; bytesRead: number; from: number } {
  const r = {
    size: bytes.length,
    before: 0,
    from,
    bytesRead: 0,
    async read(position: number, length: number) {
      const out = bytes.subarray(position, Math.min(bytes.length, position + length));
      r.bytesRead += out.length;
      if (position < r.from) r.before += Math.min(out.length, r.from - position);
      return out;
    },
  };
  return r;
}

function roundTrip(state: ResumeState): ResumeState {
  return decodeResume(encodeResume(state));
}

describe("resume", () => {
  test("resuming after every match gives exactly the rest of the results", async () => {
    await fc.assert(
      fc.asyncProperty(
        doc,
        fc.constantFrom(...QUERIES),
        fc.constantFrom("json", "jsonl", "json-seq") as fc.Arbitrary<"json" | "jsonl" | "json-seq">,
        async (value, q, format) => {
          let text: string;
          if (format !== "json") {
            if (!Array.isArray(value) || value.length === 0) return;
            text =
              format === "jsonl"
                ? `${value.map((v) => JSON.stringify(v)).join("\n")}\n`
                : value.map((v) => `\u001e${JSON.stringify(v, null, 1)}\n`).join("");
          } else text = JSON.stringify(value, null, 1);
          const all = await runAll(text, q, { format });
          const texts = all.map((m) => `${m.pointer}=${m.text}`);
          for (let i = 0; i < all.length; i++) {
            const rest = await runAll(text, q, { format, resume: roundTrip(all[i].resume) });
            expect(rest.map((m) => `${m.pointer}=${m.text}`)).toEqual(texts.slice(i + 1));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  test("a forward query resumes where its page ended, reading nothing before", async () => {
    const records = Array.from({ length: 2000 }, (_, i) => ({
      id: i,
      tags: ["x", "y"],
      deep: { v: i },
    }));
    const bytes = enc.encode(JSON.stringify({ meta: { n: 2000 }, items: records }));
    const q = compileQuery("jsonpath", "$.items[*].deep.v");
    const first: ResumeState[] = [];
    for await (const m of runQuery(trackingReader(bytes), "json", q)) {
      first.push(m.resume);
      if (first.length === 1500) break;
    }
    const state = roundTrip(first[1499]);
    expect(state.skip).toBe(0);
    expect(encodeResume(state).length).toBeLessThan(16);
    const reader = trackingReader(bytes, state.offset);
    const rest: string[] = [];
    for await (const m of runQuery(reader, "json", q, state)) {
      rest.push(m.pointer);
      if (rest.length === 10) break;
    }
    expect(rest[0]).toBe("/items/1500/deep/v");
    // Only the member names on the path ("items", "deep") are read back before the offset.
    expect(reader.before).toBeLessThanOrEqual(2 * 256);
    expect(reader.bytesRead).toBeLessThanOrEqual(64 * 1024 + 2 * 256);
  });

  test("JSONL resume states are a record offset and index", async () => {
    const text = Array.from({ length: 100 }, (_, i) =>
      JSON.stringify({ i, level: i % 3 === 0 ? "error" : "info" }),
    ).join("\n");
    const all = await runAll(text, "$[?@.level == 'error'].i", { format: "jsonl" });
    expect(all.length).toBe(34);
    const s = all[10].resume;
    expect(s.skip).toBe(0);
    expect(s.path.length).toBe(1);
    const rest = await runAll(text, "$[?@.level == 'error'].i", {
      format: "jsonl",
      resume: roundTrip(s),
    });
    expect(rest.map((m) => m.text)).toEqual(all.slice(11).map((m) => m.text));
  });

  test("member names in a resume state are read back from the source", async () => {
    const long = "k".repeat(500);
    const text = JSON.stringify({ [long]: [1, 2, 3, 4] });
    const all = await runAll(text, `$['${long}'][*]`);
    const bytes = encodeResume(all[1].resume);
    expect(bytes.length).toBeLessThan(12);
    const rest = await runAll(text, `$['${long}'][*]`, { resume: decodeResume(bytes) });
    expect(rest.map((m) => m.text)).toEqual(["3", "4"]);
  });

  test("malformed resume bytes are INVALID_CURSOR", () => {
    expect(() => decodeResume(new Uint8Array([9]))).toThrow(/malformed/);
    expect(() => decodeResume(new Uint8Array([1, 0x80]))).toThrow(/malformed/);
    expect(() => decodeResume(new Uint8Array([1, 5, 0, 0, 7]))).toThrow(/malformed/);
  });
});
