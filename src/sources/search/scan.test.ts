/**
 * The scan's read paths against a reference (each line matched alone by V8, as the contract
 * defines a search): the byte pre-scans, counting without locating, and long lines matched a
 * window at a time, for every engine; and the memory a long line may cost (counted: the read
 * buffer's size and the bytes read).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_SEARCH_LINE_BYTES, SEARCH_CHUNK_BYTES } from "../limits.js";
import { type CaseMode, type CompiledPattern, compilePattern } from "../pattern/index.js";
import { type RawMatch, runScan, type ScanJob, type ScanWindow } from "./scan.js";

const dir = mkdtempSync(path.join(tmpdir(), "pagewise-scan-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function job(
  base: string,
  pattern: CompiledPattern,
  window: ScanWindow,
  options: { context?: number; stopEarly?: boolean; maxChars?: number } = {},
): ScanJob {
  return {
    dir: base,
    ancestors: [],
    includeHidden: true,
    respectGitignore: false,
    maxWalkEntries: 10_000,
    pattern,
    context: options.context ?? 0,
    maxChars: options.maxChars ?? 400,
    window,
    stopEarly: options.stopEarly ?? false,
  };
}

interface RefMatch {
  line: number;
  column: number;
  index: number;
  length: number;
  text: string;
}

/** Each line of `content` matched alone by V8 (lines end at `\n`, a `\r` before it is dropped). */
function reference(content: string, p: CompiledPattern): RefMatch[] {
  const parts = content.split("\n");
  if (parts.at(-1) === "") parts.pop();
  const out: RefMatch[] = [];
  const re = new RegExp(p.source, p.flags);
  parts.forEach((raw, i) => {
    const terminated = i < parts.length - 1 || content.endsWith("\n");
    const text = terminated && raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    re.lastIndex = 0;
    let cp = 0;
    let at = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      cp += codePoints(text, at, m.index);
      at = m.index;
      out.push({ line: i + 1, column: cp + 1, index: m.index, length: m[0].length, text });
      if (m[0].length === 0)
        re.lastIndex = m.index + ((text.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1);
      if (re.lastIndex > text.length) break;
    }
  });
  return out;
}

const PATTERNS: Array<[string, CaseMode]> = [
  ["ab", "smart"], // a literal (bounded; case-insensitive: no byte literal)
  ["Ab", "smart"], // case-sensitive literal: the byte pre-scan
  ["b.", "smart"], // bounded, line-local
  ["a\\s", "smart"], // bounded, can match a line break: counted line by line
  ["^a|b$", "smart"], // anchors
  ["(?<=a)b", "smart"], // lookbehind: no pre-scan
  ["ab?", "insensitive"],
  ["x*", "smart"], // can match empty
  ["[ab]+c", "smart"], // linear
  ["\\w+\\s+é", "smart"], // linear, non-ASCII
  ["^\\s*a+$", "smart"], // linear, anchored
  ["(?:a|b)+\\r?$", "smart"], // linear, sees the stripped \r
  ["\\p{L}+c", "smart"], // guarded
  ["a\\-b", "smart"], // guarded: valid only without u
];

const LINE_PIECES = ["a", "b", "c", "ab", "Ab", "x", " ", "\t", "é", "😀", "\r", "-"];

describe("every read path gives each line's own matches", () => {
  it("property: exact totals and the window's items equal V8's per-line matches", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(fc.constantFrom(...LINE_PIECES), { maxLength: 12 }).map((a) => a.join("")),
          { minLength: 1, maxLength: 30 },
        ),
        fc.constantFrom("\n", "\r\n"),
        fc.boolean(),
        fc.constantFrom(...PATTERNS),
        fc.nat(8),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(0, 1),
        async (lines, eol, trailing, [source, mode], offset, limit, context) => {
          const base = path.join(dir, `prop${n++}`);
          mkdirSync(base);
          const content = lines.join(eol) + (trailing ? eol : "");
          writeFileSync(path.join(base, "f.txt"), content);
          const p = compilePattern(source, false, mode);
          const expected = reference(content, p);
          const r = await runScan(job(base, p, { kind: "offset", offset, limit }, { context }));
          expect(r.counted, `${source} total`).toBe(expected.length);
          const items = r.items.map((m) => [m.line, m.column, m.text]);
          const want = expected
            .slice(offset, offset + limit)
            .map((m) => [m.line, m.column, m.text]);
          expect(items, source).toEqual(want);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("a chunk of many lines, decoded a piece at a time", () => {
  it("gives the same totals and items as each line alone, every engine, ASCII or not", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 12_000; i++) {
      const filler = i % 3 === 0 ? "é😀 mixed" : "plain ascii text";
      lines.push(`${i} ${filler} ${i % 7 === 0 ? "Needle ab" : "hay"} ${"x".repeat(i % 50)}`);
    }
    const content = `${lines.join("\n")}\n`;
    const base = writeTree("pieces", content);
    for (const [source, mode] of [
      ["needle", "smart"], // bounded, ASCII only: the Latin-1 pre-scan
      ["needle|😀", "smart"], // bounded, not ASCII only
      ["Needle a", "smart"], // the byte literal
      ["ab$", "smart"], // anchors: counted line by line
      ["\\d+ é", "smart"], // linear
      ["(?<=Needle )ab", "smart"], // lookbehind
      ["e", "smart"], // a one-letter literal
    ] as Array<[string, CaseMode]>) {
      const p = compilePattern(source, false, mode);
      const expected = reference(content, p);
      for (const offset of [0, Math.floor(expected.length / 2)]) {
        const r = await runScan(job(base, p, { kind: "offset", offset, limit: 50 }));
        expect(r.counted, source).toBe(expected.length);
        expect(
          r.items.map((m) => [m.line, m.column, m.text]),
          source,
        ).toEqual(expected.slice(offset, offset + 50).map((m) => [m.line, m.column, m.text]));
      }
    }
  });
});

/** A file of `lines` joined by `\n`, written once. */
function writeTree(name: string, content: string | Buffer): string {
  const base = path.join(dir, name);
  mkdirSync(base);
  writeFileSync(path.join(base, "big.txt"), content);
  return base;
}

/** A long line of filler with `y` every `every` characters (and `yz` every 7th `y`). */
function longLine(chars: number, every: number): string {
  let s = "";
  const unit = "abcdefghij".repeat(Math.ceil(every / 10)).slice(0, every - 1);
  for (let i = 0; s.length < chars; i++) s += unit + (i % 7 === 0 ? "yz" : "Y");
  return s.slice(0, chars);
}

describe("a line longer than the read buffer", () => {
  const chars = 3 * MAX_SEARCH_LINE_BYTES; // 12 MiB, one line
  const line = longLine(chars, 1000);
  const content = `first y line\n${line}\nlast yz\n`;
  const base = writeTree("long", content);

  it("is matched a window at a time for bounded patterns: exact totals, items, never held whole", async () => {
    for (const [source, mode] of [
      ["y", "smart"],
      ["yz", "smart"],
      ["Y", "smart"], // case-sensitive: the byte literal
      ["ja|y", "smart"],
      ["h.y", "sensitive"],
    ] as Array<[string, CaseMode]>) {
      const p = compilePattern(source, false, mode);
      expect(p.engine, source).toBe("bounded");
      const expected = reference(content, p);
      const r = await runScan(job(base, p, { kind: "offset", offset: 0, limit: 5 }));
      expect(r.counted, source).toBe(expected.length);
      expect(r.skipped?.long_lines).toBe(0);
      expect(r.bufferBytes, source).toBeLessThanOrEqual(2 * SEARCH_CHUNK_BYTES);
      // A page inside the long line, far from its start.
      const middle = Math.floor(expected.length / 2);
      const page = await runScan(job(base, p, { kind: "offset", offset: middle, limit: 3 }));
      expect(
        page.items.map((m) => m.column),
        source,
      ).toEqual(expected.slice(middle, middle + 3).map((m) => m.column));
      for (const [k, m] of page.items.entries()) {
        if (m.line === 2) checkClamped(m, expected[middle + k]!, 400);
      }
      expect(page.items.filter((m) => m.line === 2).length, source).toBeGreaterThan(0);
    }
  });

  it("stops early inside the line and still knows where the line ends", async () => {
    const p = compilePattern("y", false, "smart");
    const r = await runScan(
      job(base, p, { kind: "offset", offset: 2, limit: 2 }, { stopEarly: true }),
    );
    expect(r.items.map((m) => m.line)).toEqual([2, 2]);
    const lineStart = Buffer.byteLength("first y line\n");
    for (const m of r.items) {
      expect(m.lineStart).toBe(lineStart);
      expect(m.lineEnd).toBe(lineStart + Buffer.byteLength(line));
    }
    expect(r.bufferBytes).toBeLessThanOrEqual(2 * SEARCH_CHUNK_BYTES);
  });

  it("a pattern that needs the whole line skips the file once the cap is read, not the whole line", async () => {
    for (const [source, context] of [
      ["y\\w*z", 0], // linear: a match can be as long as the line
      ["y", 1], // context lines are held whole
    ] as Array<[string, number]>) {
      const p = compilePattern(source, false, "smart");
      const r = await runScan(job(base, p, { kind: "offset", offset: 0, limit: 5 }, { context }));
      expect(r.skipped?.long_lines, source).toBe(1);
      expect(r.counted, source).toBe(0);
      expect(r.bufferBytes, source).toBeLessThanOrEqual(MAX_SEARCH_LINE_BYTES + SEARCH_CHUNK_BYTES);
      expect(r.bytesRead, source).toBeLessThan(MAX_SEARCH_LINE_BYTES + 3 * SEARCH_CHUNK_BYTES);
    }
  });

  it("a long line of multi-byte characters and CRLF keeps columns and byte offsets exact", async () => {
    const wide = `${"é😀ab".repeat(700_000)}y😀yz\r\n${"ñ".repeat(10)}y\r\n`;
    const b = writeTree("wide", wide);
    for (const source of ["y", "😀y", "b.é"]) {
      const p = compilePattern(source, false, "smart");
      const expected = reference(wide, p);
      const r = await runScan(job(b, p, { kind: "offset", offset: 0, limit: 1000 }));
      expect(r.counted, source).toBe(expected.length);
      expect(
        r.items.map((m) => [m.line, m.column]),
        source,
      ).toEqual(expected.slice(0, 1000).map((m) => [m.line, m.column]));
      const first = r.items.find((m) => m.line === 1);
      if (first) expect(first.lineEnd).toBe(Buffer.byteLength(wide.split("\r\n")[0]!));
    }
  });
});

/** Code points in `s[from, to)`. */
function codePoints(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) i++;
  }
  return n;
}

/** The UTF-16 index of the code point numbered `column` (1-based) in `s`. */
function unitsBefore(s: string, column: number): number {
  let i = 0;
  for (let n = 1; n < column; n++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
  }
  return i;
}

/** A clamped item shows `maxChars` units around its match, at the right column. */
function checkClamped(m: RawMatch, ref: RefMatch, maxChars: number): void {
  expect(m.truncated).toBe(true);
  expect(m.text.length).toBeLessThanOrEqual(maxChars);
  const start = unitsBefore(ref.text, m.textColumn!);
  expect(m.text).toBe(ref.text.slice(start, start + m.text.length));
  expect(start).toBeLessThanOrEqual(ref.index);
  expect(start + m.text.length).toBeGreaterThanOrEqual(ref.index + Math.min(ref.length, maxChars));
}
