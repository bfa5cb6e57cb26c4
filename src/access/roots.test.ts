import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFileConfined, Roots, resolveDirectoryConfined } from "./roots.js";

let base: string;
let real: string;
let link: string;
let outside: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-roots-")));
  real = path.join(base, "real");
  outside = path.join(base, "outside");
  link = path.join(base, "link");
  mkdirSync(path.join(real, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(real, "file.txt"), "inside\n");
  writeFileSync(path.join(real, "sub", "deep.txt"), "deep\n");
  writeFileSync(path.join(outside, "secret.txt"), "secret\n");
  symlinkSync(real, link);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

async function readVia(roots: Roots, arg: string): Promise<string> {
  const opened = await openFileConfined(roots, arg);
  try {
    return opened.realPath;
  } finally {
    await opened.handle.close();
  }
}

const code = (c: string) => expect.objectContaining({ code: c });

describe("a root given through a symlink", () => {
  it("serves absolute paths and file:// URIs under both spellings of the root", async () => {
    const roots = new Roots([link]);
    const target = path.join(real, "file.txt");
    for (const spelling of [
      path.join(link, "file.txt"),
      path.join(real, "file.txt"),
      pathToFileURL(path.join(link, "file.txt")).href,
      pathToFileURL(path.join(real, "file.txt")).href,
      "file.txt",
    ]) {
      expect(await readVia(roots, spelling)).toBe(target);
    }
    expect((await resolveDirectoryConfined(roots, `${link}/sub`)).realPath).toBe(
      path.join(real, "sub"),
    );
    expect((await resolveDirectoryConfined(roots, link)).realPath).toBe(real);
    // A root given canonically knows no other spelling: the link itself lies outside it.
    await expect(openFileConfined(new Roots([real]), path.join(link, "file.txt"))).rejects.toThrow(
      code("ACCESS_DENIED"),
    );
  });

  it("maps any path under the given spelling to the same file as the canonical spelling", async () => {
    const roots = new Roots([link]);
    const segment = fc.constantFrom("sub", "..", ".", "file.txt", "deep.txt", "x");
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { maxLength: 5 }), async (segments) => {
        const rel = segments.join("/");
        const viaLink = await readVia(roots, path.join(link, rel)).catch((e) => e.code);
        const viaReal = await readVia(roots, path.join(real, rel)).catch((e) => e.code);
        expect(viaLink).toBe(viaReal);
      }),
      { numRuns: 200 },
    );
  });

  it("still refuses what lies outside, under either spelling", async () => {
    const roots = new Roots([link]);
    for (const arg of [
      `${link}/../outside/secret.txt`,
      `${real}/../outside/secret.txt`,
      path.join(outside, "secret.txt"),
      "../outside/secret.txt",
    ]) {
      await expect(openFileConfined(roots, arg)).rejects.toThrow(code("ACCESS_DENIED"));
    }
  });
});

describe("building roots", () => {
  it("refuses a root that is a regular file, a FIFO or missing, with a clear message", () => {
    expect(() => new Roots([path.join(real, "file.txt")])).toThrow(code("NOT_A_DIRECTORY"));
    expect(() => new Roots([path.join(real, "file.txt")])).toThrow(/not a directory/);
    const fifo = path.join(base, "fifo");
    execFileSync("mkfifo", [fifo]);
    expect(() => new Roots([fifo])).toThrow(code("NOT_A_DIRECTORY"));
    expect(() => new Roots([path.join(base, "missing")])).toThrow(code("NOT_FOUND"));
  });
});

describe("file:// URIs", () => {
  it("understands the scheme in any case", async () => {
    const roots = new Roots([real]);
    const href = pathToFileURL(path.join(real, "file.txt")).href;
    for (const scheme of ["FILE:", "File:", "fIlE:"]) {
      expect(await readVia(roots, scheme + href.slice(5))).toBe(path.join(real, "file.txt"));
    }
  });

  it("refuses a query or fragment instead of dropping it", async () => {
    const roots = new Roots([real]);
    const href = pathToFileURL(path.join(real, "file.txt")).href;
    for (const arg of [`${href}?x`, `${href}#y`, `${href}?`]) {
      await expect(openFileConfined(roots, arg)).rejects.toThrow(code("INVALID_ARGUMENT"));
    }
  });
});

describe("a trailing slash", () => {
  it("never reads a file, like the OS (ENOTDIR), and says how to name the file", async () => {
    const roots = new Roots([real]);
    for (const arg of ["file.txt/", "file.txt/.", "file.txt//", `${real}/file.txt/`]) {
      const err = await openFileConfined(roots, arg).catch((e) => e);
      expect(err).toMatchObject({ code: "NOT_A_DIRECTORY" });
      expect(err.details.retry.path).toMatch(/file\.txt$/);
    }
    await expect(openFileConfined(roots, "sub/")).rejects.toThrow(code("NOT_A_FILE"));
    await expect(resolveDirectoryConfined(roots, "sub/")).resolves.toMatchObject({
      realPath: path.join(real, "sub"),
    });
    await expect(resolveDirectoryConfined(roots, "file.txt/")).rejects.toThrow(
      code("NOT_A_DIRECTORY"),
    );
  });
});

describe("ACCESS_DENIED", () => {
  it("names the caller's own roots in the message and the hint, and no one else's", async () => {
    const mine = new Roots([real, path.join(real, "sub")]);
    const err = await openFileConfined(mine, path.join(outside, "secret.txt")).catch((e) => e);
    expect(err.code).toBe("ACCESS_DENIED");
    for (const dir of mine.dirs) {
      expect(err.message).toContain(JSON.stringify(dir));
      expect(err.details.hint).toContain(JSON.stringify(dir));
    }
    expect(err.message).not.toContain(JSON.stringify(outside));
    const nul = await openFileConfined(mine, "a\0b").catch((e) => e);
    expect(nul).toMatchObject({ code: "ACCESS_DENIED" });
    expect(nul.message).toContain(JSON.stringify(real));
  });

  it("echoes a caller's path quoted and shortened, however long or odd it is", async () => {
    const roots = new Roots([real]);
    const huge = `${"x/".repeat(500_000)}secret`;
    for (const arg of [huge, `/elsewhere/${huge}`]) {
      const err = await openFileConfined(roots, arg).catch((e) => e);
      expect(err.message.length).toBeLessThan(1000);
    }
    const odd = await openFileConfined(roots, 'no\nsuch "file"').catch((e) => e);
    expect(odd.code).toBe("NOT_FOUND");
    expect(odd.message).toContain(JSON.stringify('no\nsuch "file"'));
  });

  it("stays bounded however many roots a caller has", () => {
    const many = new Roots(Array.from({ length: 50 }, () => real));
    const err = many.outside("/elsewhere");
    expect(err.message).toContain("and 40 more");
    expect(err.message.length).toBeLessThan(real.length * 12 + 300);
  });

  it("tells a caller without roots that it may read nothing", () => {
    expect(() => Roots.none().resolve("a.txt")).toThrow(/may not read any directory/);
  });
});
