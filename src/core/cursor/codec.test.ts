import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultEstimator } from "../estimate/default.js";
import { MAX_CURSOR_CHARS } from "../limits.js";
import { ByteReader, ByteWriter } from "./bytes.js";
import { CursorCodec, cursorKeyFromSecret, ephemeralCursorKey } from "./codec.js";

const key = cursorKeyFromSecret("a-test-secret-of-enough-length");
const HOUR = 3_600_000;

describe("ByteWriter / ByteReader", () => {
  it("round-trips varints, strings and bytes", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.nat({ max: Number.MAX_SAFE_INTEGER }),
            fc.string(),
            fc.uint8Array({ maxLength: 40 }),
          ),
        ),
        (values) => {
          const w = new ByteWriter();
          for (const v of values) {
            if (typeof v === "number") w.u8(0).uint(v);
            else if (typeof v === "string") w.u8(1).string(v);
            else w.u8(2).bytes(v);
          }
          const r = new ByteReader(w.finish());
          for (const v of values) {
            const tag = r.u8();
            if (tag === 0) expect(r.uint()).toBe(v);
            else if (tag === 1) expect(r.string()).toBe(v);
            else expect(Array.from(r.bytes())).toEqual(Array.from(v as Uint8Array));
          }
          r.end();
        },
      ),
    );
  });

  it("refuses truncated input and trailing bytes as INVALID_CURSOR", () => {
    const bytes = new ByteWriter().uint(300).string("hello").finish();
    const short = new ByteReader(bytes.subarray(0, bytes.length - 1));
    short.uint();
    expect(() => short.string()).toThrow(expect.objectContaining({ code: "INVALID_CURSOR" }));
    const long = new ByteReader(Uint8Array.from([...bytes, 7]));
    long.uint();
    long.string();
    expect(() => long.end()).toThrow(expect.objectContaining({ code: "INVALID_CURSOR" }));
  });
});

describe("CursorCodec", () => {
  const codec = new CursorCodec({ key });
  const payload = new ByteWriter().string("src/a.ts").uint(123456).finish();

  it("round-trips a payload and a budget in a short url-safe string", () => {
    const cursor = codec.encode("read", "anonymous", payload);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor.length).toBeLessThan(50);
    const { reader: r, budget } = codec.decodeWithBudget("read", "anonymous", cursor);
    expect(budget).toBeUndefined();
    expect(r.string()).toBe("src/a.ts");
    expect(r.uint()).toBe(123456);
    for (const carried of [0, 180, 25_000, 99_999, 100_000, Number.MAX_SAFE_INTEGER]) {
      const withBudget = codec.encode("read", "anonymous", payload, carried);
      expect(withBudget.startsWith(`${cursor}.`)).toBe(true);
      expect(codec.decodeWithBudget("read", "anonymous", withBudget).budget).toBe(carried);
    }
  });

  it("decodes every cursor it makes up to MAX_CURSOR_CHARS, and refuses to make a longer one", () => {
    // Payloads whose cursors end just below and just above the bound (4 characters per 3 bytes).
    const sized = (bytes: number) => new ByteWriter().bytes(new Uint8Array(bytes).fill(7)).finish();
    let bytes = Math.floor((MAX_CURSOR_CHARS * 3) / 4) - 40;
    let longest = "";
    for (; ; bytes++) {
      let cursor: string;
      try {
        cursor = codec.encode("search", "anonymous", sized(bytes), 25_000);
      } catch (err) {
        expect(err).toMatchObject({
          code: "RESOURCE_LIMIT_EXCEEDED",
          details: { limit: { name: "max_cursor_chars", limit: MAX_CURSOR_CHARS } },
        });
        break;
      }
      expect(cursor.length).toBeLessThanOrEqual(MAX_CURSOR_CHARS);
      expect(codec.decodeWithBudget("search", "anonymous", cursor).budget).toBe(25_000);
      longest = cursor;
    }
    expect(longest.length).toBeGreaterThan(MAX_CURSOR_CHARS - 4);
    const tooLong = longest + "0".repeat(MAX_CURSOR_CHARS + 1 - longest.length);
    expect(() => codec.decode("search", "anonymous", tooLong)).toThrow(/not a pagewise cursor/);
  });

  it("costs the same for every budget below 100,000, in the tokenizers' digit groups", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999 }), (carried) => {
        const page = (b: number) =>
          `{"next_cursor":${JSON.stringify(codec.encode("read", "a", payload, b))}}`;
        expect(defaultEstimator.count(page(carried))).toBe(defaultEstimator.count(page(1)));
      }),
    );
  });

  it("refuses any other spelling of the budget, a budget changed, and one cut off", () => {
    const cursor = codec.encode("read", "alice", payload, 180);
    const [text, digits] = cursor.split(".") as [string, string];
    const check = digits.slice(5);
    for (const budget of ["180", "0180", "000000180", "00181", "9".repeat(30)]) {
      expect(() => codec.decode("read", "alice", `${text}.${budget}${check}`)).toThrow(
        expect.objectContaining({ code: "INVALID_CURSOR" }),
      );
    }
    for (const cut of [`${text}.`, `${text}.${digits.slice(1)}`, `${text}.${check}`]) {
      expect(() => codec.decode("read", "alice", cut)).toThrow(
        expect.objectContaining({ code: "INVALID_CURSOR" }),
      );
    }
  });

  it("binds the tool and the identity", () => {
    const cursor = codec.encode("read", "alice", payload);
    expect(() => codec.decode("tail", "alice", cursor)).toThrow(
      expect.objectContaining({ code: "INVALID_CURSOR" }),
    );
    expect(() => codec.decode("read", "bob", cursor)).toThrow(
      expect.objectContaining({ code: "INVALID_CURSOR" }),
    );
  });

  it("detects every single-character change", () => {
    const cursor = codec.encode("read", "alice", payload, 500);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const digits = "0123456789";
    for (let i = 0; i < cursor.length; i++) {
      if (i === cursor.indexOf(".")) continue;
      const replacement =
        i > cursor.indexOf(".")
          ? digits[(digits.indexOf(cursor[i]!) + 3) % 10]!
          : alphabet[(alphabet.indexOf(cursor[i]!) + 17) % 64]!;
      const forged = cursor.slice(0, i) + replacement + cursor.slice(i + 1);
      expect(() => codec.decode("read", "alice", forged)).toThrow(
        expect.objectContaining({ code: "INVALID_CURSOR" }),
      );
    }
  });

  it("accepts exactly one spelling of a cursor's bytes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 60 }),
        fc.integer({ min: 0, max: 63 }),
        (bytes, pick) => {
          const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
          const cursor = codec.encode("read", "alice", bytes, pick * 1000);
          expect(() => codec.decode("read", "alice", cursor)).not.toThrow();
          const [text, digits] = cursor.split(".") as [string, string];
          const spellings = [
            `${text + alphabet[pick]!}.${digits}`,
            `${text.slice(0, -1) + alphabet[pick]!}.${digits}`,
            `${text}=.${digits}`,
            `${text}==.${digits}`,
            `${cursor}${pick % 10}`,
            `${text}.0${digits}`,
            `${text}${digits}`,
          ];
          for (const other of spellings) {
            if (other === cursor) continue;
            expect(() => codec.decode("read", "alice", other)).toThrow(
              expect.objectContaining({ code: "INVALID_CURSOR" }),
            );
          }
        },
      ),
    );
  });

  it("expires cursors after the TTL", () => {
    let now = 1_000 * HOUR;
    const clocked = new CursorCodec({ key, ttlHours: 2, now: () => now });
    const cursor = clocked.encode("read", "a", payload);
    now += 2 * HOUR;
    expect(() => clocked.decode("read", "a", cursor)).not.toThrow();
    now += HOUR;
    expect(() => clocked.decode("read", "a", cursor)).toThrow(/expired/);
  });

  it("says plainly when a cursor comes from another process's random key", () => {
    const cursor = new CursorCodec({ key: ephemeralCursorKey() }).encode("read", "a", payload);
    const restarted = new CursorCodec({ key: ephemeralCursorKey() });
    expect(() => restarted.decode("read", "a", cursor)).toThrow(/random per-process key/);
    const configured = new CursorCodec({
      key: cursorKeyFromSecret("another-secret-of-enough-length"),
    });
    expect(() => configured.decode("read", "a", cursor)).toThrow(/different key/);
  });

  it("refuses short secrets", () => {
    expect(() => cursorKeyFromSecret("short")).toThrow(/at least 16 bytes/);
  });
});
