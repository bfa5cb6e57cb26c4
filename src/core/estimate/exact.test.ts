import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EXACT_MAX_UNITS_PER_TOKEN, loadExactEstimator } from "./exact.js";
import { createEstimator, ESTIMATOR_NAMES } from "./index.js";

const SAMPLES = [
  "",
  "hello world",
  JSON.stringify({
    uri: "file:///tmp/a.txt",
    content: 'line 1\nline "2"\t😀 中文',
    has_more: false,
  }),
  "x".repeat(10_000),
  " ".repeat(1000),
  "<|endoftext|> and <|fim_prefix|> are plain text here",
];

describe("exact estimators", () => {
  afterEach(() => {
    vi.doUnmock("gpt-tokenizer/encoding/o200k_base");
    vi.resetModules();
  });

  it("count exactly what gpt-tokenizer counts, special-token text included", async () => {
    const o200k = await loadExactEstimator("o200k");
    const cl100k = await loadExactEstimator("cl100k");
    expect(o200k.name).toBe("o200k");
    expect(cl100k.name).toBe("cl100k");
    const plain = { disallowedSpecial: new Set<string>() };
    for (const s of SAMPLES) {
      expect(o200k.count(s)).toBe(countO200k(s, plain));
      expect(cl100k.count(s)).toBe(countCl100k(s, plain));
    }
    expect(o200k.count("")).toBe(0);
    expect(o200k.cheap?.name).toBe("default");
    expect(o200k.count("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("bound units per token by the longest token of both vocabularies", async () => {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve("gpt-tokenizer/package.json"));
    let longest = 0;
    for (const file of ["o200k_base.tiktoken", "cl100k_base.tiktoken"]) {
      for (const line of readFileSync(join(root, "data", file), "utf8").split("\n")) {
        if (line) longest = Math.max(longest, Buffer.from(line.split(" ")[0], "base64").length);
      }
    }
    // A UTF-16 unit takes at least one UTF-8 byte, so a token of n bytes covers at most n units.
    expect(longest).toBeLessThanOrEqual(EXACT_MAX_UNITS_PER_TOKEN);
    const o200k = await loadExactEstimator("o200k");
    for (const s of [" ".repeat(5000), "-".repeat(5000), "a".repeat(5000), "=".repeat(999)]) {
      expect(o200k.count(s) * o200k.maxUnitsPerToken).toBeGreaterThanOrEqual(s.length);
    }
  });

  it("fail with a clear message when the optional tokenizer is missing", async () => {
    vi.resetModules();
    vi.doMock("gpt-tokenizer/encoding/o200k_base", () => {
      throw new Error("Cannot find package 'gpt-tokenizer'");
    });
    const { loadExactEstimator: load } = await import("./exact.js");
    await expect(load("o200k")).rejects.toThrow(/optional package gpt-tokenizer.*npm install/);
  });
});

describe("createEstimator", () => {
  it("creates every listed estimator under its own name", async () => {
    expect(ESTIMATOR_NAMES).toEqual(["default", "openviking", "o200k", "cl100k"]);
    for (const name of ESTIMATOR_NAMES) {
      const estimator = await createEstimator(name);
      expect(estimator.name).toBe(name);
      expect(estimator.count("")).toBe(0);
      expect(estimator.count("some text")).toBeGreaterThan(0);
      expect(estimator.maxUnitsPerToken).toBeGreaterThan(0);
    }
  });

  it("rejects an unknown name with a plain Error listing the valid names", async () => {
    await expect(createEstimator("gpt2")).rejects.toThrow(
      'Unknown estimator "gpt2". Valid estimators: default, openviking, o200k, cl100k.',
    );
    await expect(createEstimator("")).rejects.toBeInstanceOf(Error);
  });
});
