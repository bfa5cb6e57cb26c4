import { isUtf8 } from "node:buffer";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { STREAM_CHUNK_BYTES } from "../limits.js";
import { completeUtf8Length, FileVersions, firstInvalidUtf8 } from "./file-version.js";

const dir = mkdtempSync(path.join(tmpdir(), "pagewise-version-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function versionOfFile(bytes: Buffer) {
  const file = path.join(dir, `f${Math.random()}`);
  writeFileSync(file, bytes);
  const fh = await open(file, "r");
  try {
    return await new FileVersions().versionOf(fh, await fh.stat({ bigint: true }));
  } finally {
    await fh.close();
  }
}

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

describe("FileVersions", () => {
  it("is content-derived", async () => {
    const a = await versionOfFile(Buffer.from("same bytes"));
    const b = await versionOfFile(Buffer.from("same bytes"));
    const c = await versionOfFile(Buffer.from("other bytes"));
    expect(a.version).toBe(b.version);
    expect(a.version).not.toBe(c.version);
    expect(FileVersions.versionOfBytes(Buffer.from("same bytes")).version).toBe(a.version);
  });

  it("validates UTF-8 across chunk boundaries", async () => {
    const emoji = Buffer.from("🙂", "utf8");
    for (const shift of [1, 2, 3]) {
      const valid = Buffer.concat([
        Buffer.alloc(STREAM_CHUNK_BYTES - shift, 0x61),
        emoji,
        Buffer.from("tail"),
      ]);
      expect((await versionOfFile(valid)).utf8).toBe(true);
    }
    const broken = Buffer.concat([
      Buffer.alloc(STREAM_CHUNK_BYTES - 1, 0x61),
      Buffer.from([0xe4, 0xb8]),
      Buffer.from("x"),
    ]);
    const info = await versionOfFile(broken);
    expect(info.utf8).toBe(false);
    expect(info.firstInvalidByte).toBe(STREAM_CHUNK_BYTES - 1);
    const truncatedAtEnd = await versionOfFile(Buffer.from([0x61, 0xf0, 0x9f]));
    expect(truncatedAtEnd.firstInvalidByte).toBe(1);
  });

  it("does not trust a just-written file's identity", async () => {
    const info = await versionOfFile(Buffer.from("fresh"));
    expect(info.fingerprint.length).toBe(0);
  });

  it("a file rewritten once while it is hashed is hashed again, and versioned as it is now", async () => {
    const file = path.join(dir, "rewritten-while-hashed");
    writeFileSync(file, "old content\n");
    const fh = await open(file, "r");
    try {
      const first = await fh.stat({ bigint: true });
      // The first hash ends after this rewrite (new size, so a new identity); the second does not.
      let rewrites = 0;
      const racing = new Proxy(fh, {
        get(target, prop) {
          if (prop === "read" && rewrites++ === 0) writeFileSync(file, "new content, longer\n");
          const value = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const { version, stat } = await new FileVersions().versionAndStat(racing, first);
      expect(version.size).toBe(Buffer.byteLength("new content, longer\n"));
      expect(stat.size).toBe(BigInt(version.size));
      expect(version.version).toBe(
        (await versionOfFile(Buffer.from("new content, longer\n"))).version,
      );
    } finally {
      await fh.close();
    }
  });
});
