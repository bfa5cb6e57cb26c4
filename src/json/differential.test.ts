/**
 * Differential tests against json-p3 (an in-memory RFC 9535 implementation): random documents and
 * random queries over the supported features must give the same nodes, in the same order.
 */
import fc from "fast-check";
import { jsonpath } from "json-p3";
import { describe, expect, test } from "vitest";
import { setFeedSliceBytesForTests } from "./query.js";
import { runAll } from "./test-support/helpers.js";

const NAMES = ["a", "b", "c", "d"];

type J = null | boolean | number | string | J[] | { [k: string]: J };

const scalar: fc.Arbitrary<J> = fc.oneof(
  fc.integer({ min: -3, max: 5 }),
  fc.constantFrom("x", "ab", "", "été", "a\nb"),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(1.5, -0.5, 100),
);

const doc: fc.Arbitrary<J> = fc.letrec<{ value: J }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 4 }),
    fc
      .uniqueArray(fc.tuple(fc.constantFrom(...NAMES), tie("value")), {
        maxLength: 4,
        selector: (t) => t[0],
      })
      .map((pairs) => Object.fromEntries(pairs)),
  ),
})).value;

const int = fc.integer({ min: -4, max: 4 });
const optInt = fc.option(int, { nil: null });
const name = fc.constantFrom(...NAMES);

const filterExpr: fc.Arbitrary<string> = fc.oneof(
  name.map((n) => `@.${n}`),
  fc
    .tuple(
      name,
      fc.constantFrom("==", "!=", "<", "<=", ">", ">="),
      fc.constantFrom("1", "2", '"x"', "true", "null"),
    )
    .map(([n, op, lit]) => `@.${n} ${op} ${lit}`),
  fc.constantFrom(
    "@ == 1",
    "@ > 0",
    "length(@) > 1",
    "length(@.a) == 2",
    "count(@.*) == 2",
    "count(@..*) > 3",
    "!@.c",
    "@.a && @.b",
    "@.a || !@.b",
    '@.a == "x" || @.b',
    "value(@..b) == 1",
    "@[0]",
    "@[-1] == 1",
    "@.a.b",
    "@[?@ > 1]",
    "@.a == @.b",
    "@ == $[0]",
  ),
);

const selector: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: name.map((n) => `'${n}'`) },
  { weight: 2, arbitrary: fc.constant("*") },
  { weight: 2, arbitrary: int.map(String) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(optInt, optInt, fc.option(fc.integer({ min: -3, max: 3 }), { nil: null }))
      .map(([s, e, st]) => `${s ?? ""}:${e ?? ""}${st === null ? "" : `:${st}`}`),
  },
  { weight: 2, arbitrary: filterExpr.map((f) => `?${f}`) },
);

const segment: fc.Arbitrary<string> = fc
  .tuple(fc.boolean(), fc.array(selector, { minLength: 1, maxLength: 3 }), fc.nat(9))
  .map(([desc, sels, r]) => {
    if (sels.length === 1 && r < 4) {
      const s = sels[0];
      if (s === "*") return desc ? "..*" : ".*";
      if (/^'[a-d]'$/.test(s)) return `${desc ? ".." : "."}${s.slice(1, -1)}`;
    }
    return `${desc && r % 3 === 0 ? ".." : ""}[${sels.join(",")}]`;
  });

const query: fc.Arbitrary<string> = fc
  .array(segment, { minLength: 0, maxLength: 3 })
  .map((segs) => `$${segs.join("")}`);

function expected(q: string, value: J): { pointer: string; value: unknown }[] {
  return jsonpath
    .query(q, value as never)
    .nodes.map((n) => ({ pointer: n.toPointer().toString(), value: n.value }));
}

async function actual(q: string, text: string): Promise<{ pointer: string; value: unknown }[]> {
  return (await runAll(text, q)).map((m) => ({ pointer: m.pointer, value: JSON.parse(m.text) }));
}

describe("differential against json-p3", () => {
  test("random documents and queries give the same nodelists in the same order", async () => {
    await fc.assert(
      fc.asyncProperty(
        doc,
        query,
        fc.constantFrom(undefined, 1, "\t"),
        async (value, q, indent) => {
          const text = JSON.stringify(value, null, indent);
          expect(await actual(q, text)).toEqual(expected(q, value));
        },
      ),
      { numRuns: 150 },
    );
  });

  test("records of JSONL behave as one array", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { maxLength: 5 }), query, async (records, q) => {
        if (q === "$" || q.includes("$[0]")) return;
        const text = records.map((r) => JSON.stringify(r)).join("\n");
        const got = (await runAll(text, q, { format: "jsonl" })).map((m) => ({
          pointer: m.pointer,
          value: JSON.parse(m.text),
        }));
        expect(got).toEqual(expected(q, records));
      }),
      { numRuns: 500 },
    );
  });
});

describe("differential with tight buffers (lookahead, ordered release)", () => {
  test("large objects queried with descendant names", async () => {
    setFeedSliceBytesForTests(7);
    try {
      const record = fc.dictionary(fc.constantFrom(...NAMES), scalar, { maxKeys: 3 });
      const big = fc
        .record({
          items: fc.array(
            fc.oneof(record, fc.dictionary(fc.constantFrom(...NAMES), record, { maxKeys: 2 })),
            {
              minLength: 20,
              maxLength: 60,
            },
          ),
          a: fc.option(scalar, { nil: undefined }),
          b: fc.option(record, { nil: undefined }),
        })
        .map((v) => JSON.parse(JSON.stringify(v)) as J);
      const q = fc.constantFrom(
        "$..a",
        "$..b",
        "$..a.b",
        "$..['b','a']",
        "$.items..a",
        "$..[?@.a]",
        "$..c",
      );
      await fc.assert(
        fc.asyncProperty(big, q, async (value, query) => {
          const text = JSON.stringify(value);
          let got: { pointer: string; value: unknown }[];
          try {
            got = (await runAll(text, query, { limits: { maxBufferedMatches: 30 } })).map((m) => ({
              pointer: m.pointer,
              value: JSON.parse(m.text),
            }));
          } catch (e) {
            expect((e as { code?: string }).code).toBe("RESOURCE_LIMIT_EXCEEDED");
            return;
          }
          expect(got).toEqual(expected(query, value));
          const all = await runAll(text, query, { limits: { maxBufferedMatches: 30 } });
          for (let i = 0; i < all.length; i += 7) {
            const rest = await runAll(text, query, {
              resume: all[i].resume,
              limits: { maxBufferedMatches: 30 },
            });
            expect(rest.map((m) => m.pointer)).toEqual(all.slice(i + 1).map((m) => m.pointer));
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      setFeedSliceBytesForTests(8 * 1024);
    }
  });
});

describe("results do not depend on how the input is cut", () => {
  test("feeding in 1..13-byte slices gives the same matches and resume states", async () => {
    await fc.assert(
      fc.asyncProperty(doc, query, fc.integer({ min: 1, max: 13 }), async (value, q, slice) => {
        const text = JSON.stringify(value, null, 1);
        const whole = await runAll(text, q);
        setFeedSliceBytesForTests(slice);
        try {
          const cut = await runAll(text, q);
          expect(cut.map((m) => [m.pointer, m.text, m.resume])).toEqual(
            whole.map((m) => [m.pointer, m.text, m.resume]),
          );
        } finally {
          setFeedSliceBytesForTests(8 * 1024);
        }
      }),
      { numRuns: 300 },
    );
  });
});
