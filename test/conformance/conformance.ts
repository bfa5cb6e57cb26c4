/**
 * The conformance suite: every promise of the contract that holds for every paging tool, run
 * against each tool the same way (as Hono runs one router suite against every router). A tool
 * describes its fixture and how to walk it (`ConformanceCase`); `runSourceConformance` checks:
 *
 * - every page fits the budget, continuations by cursor alone included (the cursor carries it);
 * - the walk is lossless: every unit of the fixture exactly once;
 * - a repeated cursor gives the same page;
 * - a source changed between pages is CONTENT_CHANGED, never a page mixing two versions;
 * - tampered, foreign-tool and foreign-path cursors are INVALID_CURSOR;
 * - a cursor with an argument that conflicts with it is INVALID_ARGUMENT;
 * - bad numbers are INVALID_ARGUMENT, a budget over the cap is lowered and reported;
 * - the one paging rule: passing `next_cursor` alone, as `cursor`, until it is null walks the
 *   whole result, and the tool's own end fields agree with it;
 * - budgets exact: for a first call and a continuation, the budgets that return a page are
 *   exactly those from the one a refusal names;
 * - a walk started at that smallest budget goes on at it (the page's own metadata grows along a
 *   walk: WALK_RESERVE_TOKENS covers it).
 *
 * A case may skip a promise, always with the reason (`skip`).
 */
import { statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InMemoryServer, startInMemory } from "../support/in-memory.js";
import { tempDir } from "../support/server.js";

export const PROMISES = [
  "budget",
  "lossless",
  "repeatable",
  "changed",
  "tampered",
  "conflicting",
  "numbers",
  "one-rule",
  "threshold",
  "walk-at-threshold",
] as const;
export type PromiseName = (typeof PROMISES)[number];

/** A page is a tool's JSON, checked field by field. */
type Page = any;

export interface ConformanceCase {
  readonly tool: string;
  /** Names the case when a tool has several (default: the tool's name). */
  readonly name?: string;
  /** Promises this tool does not make, each with the reason. */
  readonly skip?: Partial<Record<PromiseName, string>>;
  /** Writes the fixture into `dir`. */
  setup(dir: string): void;
  /** The first call's arguments, without max_tokens. */
  readonly first: Record<string, unknown>;
  /** The budget of the walk: small enough for several pages. */
  readonly budget: number;
  /** The continuation of `page` by its cursor alone, or undefined at the end of the walk. */
  next(page: Page): Record<string, unknown> | undefined;
  /** The units a page delivers (lines, entries, matches, records…). */
  units(page: Page): string[];
  /** Every unit of the fixture, in walk order (compared as a multiset unless `ordered`). */
  expected(dir: string): string[];
  /** Units are compared in order (a text whose pages concatenate). */
  readonly ordered?: boolean;
  /** Rewrites the source so that a continuation may not mix versions (same size, mtime kept). */
  change(dir: string): void;
  /** An argument that conflicts with what the cursor fixes. */
  readonly conflicting: Record<string, unknown>;
  /** An argument naming another path than the cursor's. */
  readonly otherPath: Record<string, unknown>;
}

/** Rewrites `file` with `content` of the same size and puts its mtime back. */
export function rewriteKeepingMtime(file: string, content: string): void {
  const before = statSync(file);
  if (Buffer.byteLength(content) !== before.size) throw new Error("rewrite must keep the size");
  writeFileSync(file, content);
  utimesSync(file, before.atime, before.mtime);
}

async function walk(
  server: InMemoryServer,
  c: ConformanceCase,
  onPage?: (page: { text: string; json: Page }) => void,
): Promise<string[][]> {
  const units: string[][] = [];
  let page = await server.call(c.tool, { ...c.first, max_tokens: c.budget });
  for (let guard = 0; ; guard++) {
    expect(page.isError, page.text).toBe(false);
    onPage?.(page);
    units.push(c.units(page.json));
    const next = c.next(page.json);
    if (next === undefined) break;
    if (guard > 5000) throw new Error("the walk does not end");
    page = await server.call(c.tool, next);
  }
  return units;
}

function errorCode(outcome: { isError: boolean; json: Page; text: string }): string {
  expect(outcome.isError, outcome.text).toBe(true);
  return outcome.json.error.code;
}

/** Budgets above a threshold checked to work (each a call). */
const ABOVE_THRESHOLD = 40;
/** Budgets below a threshold checked to be refused with it. */
const BELOW_THRESHOLD = 12;
/** Longer than the racy window of a file system with fine timestamps (FINE_RACY_WINDOW_NS). */
const SETTLE_MS = 120;
/** Pages of a walk at the threshold budget checked (a walk one unit per page can be long). */
const THRESHOLD_WALK_PAGES = 300;

/** Flips one character of a cursor (the MAC must catch it). */
function tamper(cursor: string): string {
  const i = Math.floor(cursor.length / 2);
  return cursor.slice(0, i) + (cursor[i] === "A" ? "B" : "A") + cursor.slice(i + 1);
}

export function runSourceConformance(c: ConformanceCase): void {
  describe(`conformance: ${c.name ?? c.tool}`, () => {
    let server: InMemoryServer;
    let dir: string;
    let cleanup: () => void;
    beforeAll(async () => {
      ({ dir, cleanup } = tempDir(`pagewise-conf-${c.tool}-`));
      c.setup(dir);
      writeFileSync(path.join(dir, "other.txt"), "another file\n".repeat(200));
      server = await startInMemory([dir]);
    });
    afterAll(async () => {
      await server?.close();
      cleanup?.();
    });
    const test = (name: PromiseName, title: string, body: () => Promise<void>) => {
      const reason = c.skip?.[name];
      if (reason !== undefined) it.skip(`${title} (skipped: ${reason})`, body);
      else it(title, body);
    };
    /** The first page and its continuation arguments (the fixture must give several pages). */
    const firstPage = async () => {
      const page = await server.call(c.tool, { ...c.first, max_tokens: c.budget });
      expect(page.isError, page.text).toBe(false);
      const next = c.next(page.json);
      if (next === undefined) throw new Error("the fixture must need more than one page");
      return { page, next };
    };

    test("budget", "every page fits the budget, cursor-only continuations included", async () => {
      let pages = 0;
      await walk(server, c, (page) => {
        pages++;
        expect(server.estimator.count(page.text)).toBeLessThanOrEqual(c.budget);
      });
      expect(pages).toBeGreaterThan(2);
    });

    test("lossless", "the walk gives every unit exactly once", async () => {
      const got = (await walk(server, c)).flat();
      const want = c.expected(dir);
      if (c.ordered) expect(got.join("")).toBe(want.join(""));
      else expect([...got].sort()).toEqual([...want].sort());
    });

    test("repeatable", "a repeated cursor gives the same page", async () => {
      const { next } = await firstPage();
      const a = await server.call(c.tool, next);
      const b = await server.call(c.tool, next);
      expect(a.isError, a.text).toBe(false);
      expect(b.text).toBe(a.text);
    });

    test("changed", "a source changed between pages is CONTENT_CHANGED, never mixed", async () => {
      const { next } = await firstPage();
      c.change(dir);
      const after = await server.call(c.tool, next);
      expect(errorCode(after)).toBe("CONTENT_CHANGED");
      c.setup(dir);
    });

    test(
      "tampered",
      "tampered, foreign-tool and foreign-path cursors are INVALID_CURSOR",
      async () => {
        const { next } = await firstPage();
        const [key, cursor] = Object.entries(next).find(([, v]) => typeof v === "string") as [
          string,
          string,
        ];
        expect(errorCode(await server.call(c.tool, { [key]: tamper(cursor) }))).toBe(
          "INVALID_CURSOR",
        );
        const foreignTool = c.tool === "read" ? "tail" : "read";
        const foreignArgs = foreignTool === "tail" ? { before: cursor } : { cursor };
        expect(errorCode(await server.call(foreignTool, foreignArgs))).toBe("INVALID_CURSOR");
        expect(errorCode(await server.call(c.tool, { ...next, ...c.otherPath }))).toBe(
          "INVALID_CURSOR",
        );
      },
    );

    test("conflicting", "a cursor with a conflicting argument is INVALID_ARGUMENT", async () => {
      const { next } = await firstPage();
      expect(errorCode(await server.call(c.tool, { ...next, ...c.conflicting }))).toBe(
        "INVALID_ARGUMENT",
      );
    });

    test(
      "numbers",
      "bad numbers are INVALID_ARGUMENT; a budget over the cap is lowered",
      async () => {
        for (const bad of [0, -1, 1.5, "8000", Number.NaN]) {
          const outcome = await server.call(c.tool, { ...c.first, max_tokens: bad });
          expect(errorCode(outcome)).toBe("INVALID_ARGUMENT");
        }
        const lowered = await server.call(c.tool, { ...c.first, max_tokens: 1_000_000 });
        expect(lowered.isError, lowered.text).toBe(false);
        expect(lowered.json.max_tokens).toBe(25_000);
        expect(server.estimator.count(lowered.text)).toBeLessThanOrEqual(25_000);
      },
    );

    test(
      "one-rule",
      "next_cursor passed alone as cursor, until null, walks every unit",
      async () => {
        const units: string[][] = [];
        let page = await server.call(c.tool, { ...c.first, max_tokens: c.budget });
        for (let guard = 0; ; guard++) {
          expect(page.isError, page.text).toBe(false);
          units.push(c.units(page.json));
          const cursor = page.json.next_cursor;
          expect(cursor === null, "next_cursor is null exactly when the tool says the end").toBe(
            c.next(page.json) === undefined,
          );
          if (cursor === null) break;
          expect(cursor).toBeTypeOf("string");
          if (guard > 5000) throw new Error("the walk does not end");
          page = await server.call(c.tool, { cursor });
        }
        expect(units.length).toBeGreaterThan(2);
        const got = units.flat();
        const want = c.expected(dir);
        if (c.ordered) expect(got.join("")).toBe(want.join(""));
        else expect([...got].sort()).toEqual([...want].sort());
      },
    );

    /** The threshold a refusal of `args` names, checked against the budgets around it. */
    const threshold = async (args: Record<string, unknown>): Promise<number> => {
      const refused = await server.call(c.tool, { ...args, max_tokens: 1 });
      expect(errorCode(refused)).toBe("BUDGET_TOO_SMALL");
      const named: number = refused.json.error.minimum_max_tokens;
      for (let budget = Math.max(1, named - BELOW_THRESHOLD); budget < named; budget++) {
        const below = await server.call(c.tool, { ...args, max_tokens: budget });
        expect(errorCode(below), `max_tokens ${budget} under ${named}`).toBe("BUDGET_TOO_SMALL");
        expect(below.json.error.minimum_max_tokens).toBe(named);
      }
      for (let budget = named; budget < named + ABOVE_THRESHOLD; budget++) {
        const page = await server.call(c.tool, { ...args, max_tokens: budget });
        expect(page.isError, `max_tokens ${budget} from ${named}: ${page.text}`).toBe(false);
        expect(server.estimator.count(page.text)).toBeLessThanOrEqual(budget);
      }
      return named;
    };

    /** Waits out the provisional versions of files the fixture wrote a moment ago. */
    const settled = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    test(
      "threshold",
      "the budgets that return a page are exactly those from the one a refusal names",
      async () => {
        // A file written a moment ago has a provisional version, whose cursors cost a token
        // more or less than the settled one's (the "changed" promise rewrote the fixture).
        await settled();
        const check = async () => {
          await threshold(c.first);
          await threshold((await firstPage()).next);
        };
        // A cursor may carry a time (a list walk's start second, the issue hour): a check that
        // spanned a change of second can see the threshold move by a token, and runs again once.
        const second = Math.floor(Date.now() / 1000);
        try {
          await check();
        } catch (error) {
          if (Math.floor(Date.now() / 1000) === second) throw error;
          await check();
        }
      },
    );

    test(
      "walk-at-threshold",
      "a walk started at the smallest budget that works goes on at it",
      async () => {
        await settled();
        const refused = await server.call(c.tool, { ...c.first, max_tokens: 1 });
        const named: number = refused.json.error.minimum_max_tokens;
        let page = await server.call(c.tool, { ...c.first, max_tokens: named });
        for (let pages = 1; pages < THRESHOLD_WALK_PAGES; pages++) {
          expect(page.isError, `page ${pages} at max_tokens ${named}: ${page.text}`).toBe(false);
          const cursor = page.json.next_cursor;
          if (cursor === null) break;
          page = await server.call(c.tool, { cursor });
        }
      },
    );
  });
}
