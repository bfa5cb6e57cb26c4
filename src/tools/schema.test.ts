import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isPagewiseError } from "../core/index.js";
import { TOOLS } from "./index.js";
import { MAX_COUNT_ARG, MAX_TOKENS_ARG, parseArgs, wholeNumber } from "./schema.js";

const input = z.object({ n: wholeNumber(1, MAX_COUNT_ARG, "a count").optional() }).strict();

function failure(args: unknown) {
  try {
    parseArgs(input, args);
  } catch (err) {
    if (isPagewiseError(err)) return err;
    throw err;
  }
  return undefined;
}

describe("wholeNumber", () => {
  it("accepts every whole number within its bounds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_COUNT_ARG }), (n) => {
        expect(parseArgs(input, { n })).toEqual({ n });
      }),
    );
  });

  it("refuses every number outside its bounds as INVALID_ARGUMENT naming the limit", () => {
    const outside = fc.oneof(
      fc.double({ min: MAX_COUNT_ARG + 1, max: Number.MAX_VALUE, noNaN: true }),
      fc.double({ min: -Number.MAX_VALUE, max: 0.999, noNaN: true }),
      fc.constantFrom(2 ** 53 + 2, 1e21, 1e308, 0, -1, Number.MAX_SAFE_INTEGER),
    );
    fc.assert(
      fc.property(outside, (n) => {
        const error = failure({ n });
        expect(error?.code).toBe("INVALID_ARGUMENT");
        if (Number.isInteger(n)) {
          expect(error?.details.limit).toEqual({
            name: "n",
            limit: n < 1 ? 1 : MAX_COUNT_ARG,
            value: n,
          });
          expect(error?.message).toContain(n < 1 ? "at least 1" : `at most ${MAX_COUNT_ARG}`);
        }
      }),
    );
  });

  it("refuses fractions, strings, infinities and NaN as not whole numbers", () => {
    for (const n of [1.5, "3", Number.POSITIVE_INFINITY, Number.NaN, null, true]) {
      const error = failure({ n });
      expect(error?.code).toBe("INVALID_ARGUMENT");
      expect(error?.message).toContain("n: must be a whole number");
    }
  });
});

describe("unknown keys", () => {
  it("say what to pass instead and list the accepted arguments", () => {
    const error = failure({ n: 2, count: 3 });
    expect(error?.message).toContain('"count" is not an argument here');
    expect(error?.details.hint).toBe("Arguments this tool takes: n.");
    const read = TOOLS.find((t) => t.name === "read")!;
    try {
      parseArgs(read.input, { path: "x.txt", before: "abc" });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toContain('"before" is not an argument here: pass "cursor"');
    }
  });

  it("never look a key up on Object.prototype: prototype names in any casing are INVALID_ARGUMENT", () => {
    const prototypeName = fc
      .constantFrom(...Object.getOwnPropertyNames(Object.prototype), "prototype")
      .chain((name) =>
        fc
          .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
          .map((upper) =>
            [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(""),
          ),
      );
    fc.assert(
      fc.property(fc.constantFrom(...TOOLS), prototypeName, (tool, key) => {
        // As a JSON member name, the way arguments arrive: an own property, even "__proto__".
        const args = JSON.parse(`{${JSON.stringify(key)}: 1}`);
        try {
          parseArgs(tool.input, args);
          expect.unreachable();
        } catch (err) {
          expect(isPagewiseError(err), String(err)).toBe(true);
          expect((err as { code: string }).code).toBe("INVALID_ARGUMENT");
        }
      }),
    );
  });
});

describe("published schemas", () => {
  it("bound every integer argument, and max_tokens up to the safe-integer limit", () => {
    for (const tool of TOOLS) {
      const schema = z.toJSONSchema(tool.input, { io: "input" }) as {
        properties: Record<string, { type?: string; minimum?: number; maximum?: number }>;
      };
      for (const [name, property] of Object.entries(schema.properties)) {
        expect(property.type, `${tool.name}.${name}`).not.toBe("number");
        if (property.type !== "integer") continue;
        expect(property.minimum, `${tool.name}.${name}`).toBeTypeOf("number");
        expect(property.maximum, `${tool.name}.${name}`).toBeTypeOf("number");
      }
      if (schema.properties.max_tokens)
        expect(schema.properties.max_tokens.maximum).toBe(MAX_TOKENS_ARG);
    }
  });
});
