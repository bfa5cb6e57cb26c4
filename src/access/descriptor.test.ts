import { fstatSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closesInPlace, descriptorCloses, openDescriptor } from "./descriptor.js";
import { openFileConfined, Roots } from "./roots.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "pagewise-descriptor-"));
  writeFileSync(path.join(dir, "a.txt"), "hello descriptor\n".repeat(1000));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openCount = () => readdirSync("/proc/self/fd").length;

describe("Descriptor", () => {
  it("closes only after the reads in flight, and refuses reads once closing", async () => {
    const file = await openDescriptor(path.join(dir, "a.txt"), 0);
    const buffer = Buffer.alloc(16);
    const reading = file.read(buffer, 0, 16, 0);
    const closing = file.close();
    await expect(reading).resolves.toEqual({ bytesRead: 16 });
    expect(buffer.toString()).toBe("hello descriptor");
    await closing;
    await expect(file.read(buffer, 0, 16, 0)).rejects.toMatchObject({ code: "EBADF" });
    // Closing twice is one close.
    await file.close();
    expect(() => fstatSync(file.fd)).toThrow();
  });

  it.runIf(process.platform === "linux")(
    "closes a file deleted while open in the thread pool, where freeing its blocks cannot stall",
    async () => {
      const linked = path.join(dir, "linked.txt");
      const deleted = path.join(dir, "deleted.txt");
      writeFileSync(linked, "x");
      writeFileSync(deleted, "x");
      const kept = await openDescriptor(linked, 0);
      const gone = await openDescriptor(deleted, 0);
      expect(kept.local).toBe(true);
      unlinkSync(deleted);
      const before = { ...descriptorCloses };
      await kept.close();
      expect(descriptorCloses).toEqual({ ...before, inPlace: before.inPlace + 1 });
      await gone.close();
      expect(descriptorCloses).toEqual({ inPlace: before.inPlace + 1, inPool: before.inPool + 1 });
      expect(() => fstatSync(gone.fd)).toThrow();
    },
  );

  it("closes on the serving thread only files still linked and not large", () => {
    expect(closesInPlace({ nlink: 1, size: 1000 })).toBe(true);
    expect(closesInPlace({ nlink: 2, size: 64 << 20 })).toBe(true);
    expect(closesInPlace({ nlink: 0, size: 10 })).toBe(false);
    expect(closesInPlace({ nlink: 1, size: (64 << 20) + 1 })).toBe(false);
  });

  it.runIf(process.platform === "linux")(
    "leaves no descriptor open after opens that succeed or are refused",
    async () => {
      const roots = new Roots([dir]);
      const before = openCount();
      for (let i = 0; i < 200; i++) {
        const opened = await openFileConfined(roots, "a.txt");
        expect((await opened.handle.stat()).size).toBe(17_000n);
        await opened.handle.close();
        await expect(openFileConfined(roots, ".")).rejects.toMatchObject({ code: "NOT_A_FILE" });
        await expect(openFileConfined(roots, "missing.txt")).rejects.toMatchObject({
          code: "NOT_FOUND",
        });
      }
      expect(openCount()).toBe(before);
    },
  );
});
