import { isUtf8 } from "node:buffer";
import type { BigIntStats } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PagewiseError } from "../errors.js";
import type { OpenFile } from "../io/byte-source.js";
import { FINE_RACY_WINDOW_NS, RACY_WINDOW_NS, SETTLE_ATTEMPTS } from "../limits.js";
import {
  CONTENT_VERSION_TAG,
  completeUtf8Length,
  FileVersions,
  firstInvalidUtf8,
  racyWindowNs,
  stateVersion,
  type VersionClock,
} from "./file-version.js";

describe("UTF-8 helpers", () => {
  it("firstInvalidUtf8 agrees with the platform validator", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const at = firstInvalidUtf8(bytes);
        expect(at === bytes.length).toBe(isUtf8(bytes));
        expect(isUtf8(bytes.subarray(0, at))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("completeUtf8Length never splits a character of valid text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.nat(), (text, cut) => {
        const bytes = Buffer.from(text, "utf8");
        const at = Math.min(cut, bytes.length);
        const complete = completeUtf8Length(bytes, at);
        expect(isUtf8(bytes.subarray(0, complete))).toBe(true);
        expect(at - complete).toBeLessThanOrEqual(3);
      }),
    );
  });
});

const SECOND = 1_000_000_000n;
/** A moment with sub-second digits, as a fine-grained file system stamps them. */
const NOW = 1_800_000_000n * SECOND + 123_456_789n;

interface State {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

function statOf(s: Partial<State>): BigIntStats {
  return {
    dev: 64n,
    ino: 1234n,
    size: 100n,
    mtimeNs: NOW - 10n * SECOND,
    ctimeNs: NOW - 10n * SECOND,
    ...s,
  } as unknown as BigIntStats;
}

describe("state versions", () => {
  it("change with every field of the state, and never with the device number", () => {
    const stateArb = fc.record({
      dev: fc.bigInt({ min: 0n, max: 1n << 40n }),
      ino: fc.bigInt({ min: 1n, max: 1n << 40n }),
      size: fc.bigInt({ min: 0n, max: 1n << 40n }),
      mtimeNs: fc.bigInt({ min: 0n, max: NOW }),
      ctimeNs: fc.bigInt({ min: 0n, max: NOW }),
    });
    fc.assert(
      fc.property(
        stateArb,
        fc.constantFrom("ino", "size", "mtimeNs", "ctimeNs"),
        fc.bigInt({ min: 1n, max: 1n << 20n }),
        fc.bigInt({ min: 0n, max: 1n << 40n }),
        (state, field, delta, otherDev) => {
          const version = stateVersion(statOf(state)).version;
          // Another machine mounting the same directory sees another device number.
          expect(stateVersion(statOf({ ...state, dev: otherDev })).version).toBe(version);
          const moved = { ...state, [field]: state[field as keyof State] + delta };
          expect(stateVersion(statOf(moved)).version).not.toBe(version);
        },
      ),
    );
  });

  it("are told from content versions by their kind", () => {
    const state = stateVersion(statOf({}));
    expect(state.fingerprint.length).toBe(0);
    expect(state.utf8).toBeUndefined();
    const content = FileVersions.versionOfBytes(Buffer.from("text"));
    expect(content.fingerprint).toEqual(CONTENT_VERSION_TAG);
    const forged = { digest: state.digest, fingerprint: CONTENT_VERSION_TAG };
    expect(() => FileVersions.check(state, forged)).toThrow(PagewiseError);
    expect(() => FileVersions.check(state, state)).not.toThrow();
  });
});

describe("content versions", () => {
  it("are content-derived, and know whether the bytes are UTF-8", () => {
    const a = FileVersions.versionOfBytes(Buffer.from("same bytes"));
    expect(FileVersions.versionOfBytes(Buffer.from("same bytes")).version).toBe(a.version);
    expect(FileVersions.versionOfBytes(Buffer.from("other bytes")).version).not.toBe(a.version);
    expect(a.utf8).toBe(true);
    const broken = FileVersions.versionOfBytes(Buffer.from([0x61, 0xe9, 0x62]));
    expect(broken).toMatchObject({ utf8: false, firstInvalidByte: 1 });
  });
});

describe("racy windows", () => {
  it("are short only for sub-second timestamps from this machine's clock", () => {
    expect(racyWindowNs(statOf({ ctimeNs: NOW }), true)).toBe(FINE_RACY_WINDOW_NS);
    // A ctime on a whole second: the file system may keep whole seconds only.
    expect(racyWindowNs(statOf({ ctimeNs: NOW - 123_456_789n }), true)).toBe(RACY_WINDOW_NS);
    // Stamped by another machine's clock (a network file system).
    expect(racyWindowNs(statOf({ ctimeNs: NOW }), false)).toBe(RACY_WINDOW_NS);
  });
});

/** A clock that moves only when slept on, and a file whose stat follows a script. */
function scripted(states: BigIntStats[]) {
  let now = NOW;
  const sleeps: number[] = [];
  let stats = 0;
  const clock: VersionClock = {
    nowNs: () => now,
    async sleep(ms) {
      sleeps.push(ms);
      now += BigInt(ms) * 1_000_000n;
    },
  };
  const file: OpenFile = {
    read: async () => ({ bytesRead: 0 }),
    async stat() {
      return states[Math.min(stats++, states.length - 1)]!;
    },
  };
  return { versions: new FileVersions(16, clock), file, sleeps, stats: () => stats };
}

describe("settle", () => {
  const local = { localClock: true };

  it("takes a state whose ctime is a window in the past as it is, with no I/O", async () => {
    const st = statOf({ ctimeNs: NOW - FINE_RACY_WINDOW_NS - 1n });
    const s = scripted([]);
    expect(await s.versions.settle(s.file, st, local)).toBe(st);
    expect(s.sleeps).toEqual([]);
    expect(s.stats()).toBe(0);
  });

  it("waits out the rest of the window of a file written a moment ago", async () => {
    const st = statOf({ ctimeNs: NOW - 20_000_000n });
    const s = scripted([st]);
    expect(await s.versions.settle(s.file, st, local)).toBe(st);
    expect(s.sleeps).toEqual([31]);
  });

  it("takes the newer state of a file written during the wait, once that one is still", async () => {
    const first = statOf({ ctimeNs: NOW - 1_000_000n });
    const second = statOf({ ctimeNs: NOW + 30_000_000n, size: 200n });
    const s = scripted([second, second]);
    const settled = await s.versions.settle(s.file, first, local);
    expect(settled).toBe(second);
    expect(s.sleeps.length).toBe(2);
  });

  it("waits a whole window for a ctime in the future, and trusts a state seen still across it", async () => {
    const st = statOf({ ctimeNs: NOW + 3600n * SECOND });
    const s = scripted([st]);
    expect(await s.versions.settle(s.file, st, local)).toBe(st);
    expect(s.sleeps).toEqual([Number(FINE_RACY_WINDOW_NS / 1_000_000n) + 1]);
  });

  it("refuses a file written continuously with CONTENT_CHANGED, after a bounded wait", async () => {
    let size = 0n;
    const s = scripted([]);
    const growing: OpenFile = {
      read: s.file.read,
      // A writer appends between every two looks; each write stamps the clock's time.
      stat: async () => statOf({ size: ++size, ctimeNs: NOW + size * 60_000_000n }),
    };
    const error = await s.versions
      .settle(growing, statOf({ ctimeNs: NOW }), local)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PagewiseError);
    expect((error as PagewiseError).code).toBe("CONTENT_CHANGED");
    expect(s.sleeps.length).toBe(SETTLE_ATTEMPTS);
  });
});
