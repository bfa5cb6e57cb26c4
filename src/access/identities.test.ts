import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AuthFileError,
  AuthFileVerifier,
  bearerToken,
  parseAuthFile,
  parseAuthFileAsync,
  tokenSha256,
} from "./identities.js";
import { openFileConfined } from "./roots.js";

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-identities-")));
  mkdirSync(path.join(dir, "a"));
  mkdirSync(path.join(dir, "b"));
  writeFileSync(path.join(dir, "a", "x.txt"), "x");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = (identities: unknown[]) => JSON.stringify({ identities });
const entry = (name: string, token: string, roots: string[]) => ({
  name,
  token_sha256: tokenSha256(token),
  roots,
});

describe("bearerToken", () => {
  it("takes the token of a Bearer header, case-insensitively", () => {
    expect(bearerToken("Bearer abc.def")).toBe("abc.def");
    expect(bearerToken("bearer   abc")).toBe("abc");
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe("parseAuthFile", () => {
  it("maps token hashes to identities with their own roots (relative to the file)", () => {
    const { byHash, warnings } = parseAuthFile(
      file([entry("alice", "ta", ["a"]), entry("bob", "tb", [path.join(dir, "b")])]),
      dir,
    );
    expect(warnings).toEqual([]);
    expect(byHash.get(tokenSha256("ta"))?.identity).toBe("alice");
    expect(byHash.get(tokenSha256("ta"))?.roots.dirs).toEqual([path.join(dir, "a")]);
    expect(byHash.get(tokenSha256("tb"))?.roots.dirs).toEqual([path.join(dir, "b")]);
  });

  it("accepts upper-case hex hashes", () => {
    const e = { ...entry("alice", "ta", ["a"]), token_sha256: tokenSha256("ta").toUpperCase() };
    expect(parseAuthFile(file([e]), dir).byHash.has(tokenSha256("ta"))).toBe(true);
  });

  it("rejects malformed files with a message that names the problem", () => {
    const cases: Array<[string, RegExp]> = [
      ["{", /not valid JSON/],
      ["{}", /identities/],
      [file([{ name: "", token_sha256: tokenSha256("t"), roots: [] }]), /name/],
      [file([{ name: "x", token_sha256: "abc", roots: [] }]), /64 hex/],
      [file([{ name: "x", token_sha256: tokenSha256("t"), roots: "a" }]), /roots/],
      [file([entry("x", "t", ["a"]), entry("x", "u", ["a"])]), /twice/],
      [file([entry("x", "t", ["a"]), entry("y", "t", ["a"])]), /used twice/],
    ];
    for (const [text, message] of cases) {
      expect(() => parseAuthFile(text, dir)).toThrow(AuthFileError);
      expect(() => parseAuthFile(text, dir)).toThrow(message);
    }
  });

  it("gives the same identities when the roots are resolved without blocking (reloads)", async () => {
    symlinkSync(path.join(dir, "b"), path.join(dir, "link-to-b"));
    writeFileSync(path.join(dir, "file"), "");
    const text = file([
      entry("alice", "ta", ["a", "link-to-b", "nope"]),
      entry("bob", "tb", ["file"]),
      entry("carol", "tc", [path.join(dir, "b"), "a"]),
    ]);
    const sync = parseAuthFile(text, dir);
    const async = await parseAuthFileAsync(text, dir);
    const shape = (c: typeof sync) => ({
      warnings: c.warnings,
      identities: [...c.byHash].map(([key, id]) => [key, id.identity, id.roots.dirs]),
    });
    expect(shape(async)).toEqual(shape(sync));
    expect(sync.byHash.get(tokenSha256("ta"))!.roots.dirs).toEqual([
      path.join(dir, "a"),
      path.join(dir, "b"),
    ]);
    expect(sync.warnings).toHaveLength(2);
    // A link's target is the root, and the link's spelling still names it.
    const alice = async.byHash.get(tokenSha256("ta"))!.roots;
    expect(alice.resolvePath(path.join(dir, "link-to-b", "y")).lexical).toBe(
      path.join(dir, "b", "y"),
    );
  });

  it("leaves out a missing root with a warning, and an identity without roots reads nothing", async () => {
    const { byHash, warnings } = parseAuthFile(file([entry("c", "tc", ["nope"])]), dir);
    expect(warnings[0]).toContain("does not exist");
    const caller = byHash.get(tokenSha256("tc"))!;
    expect(caller.roots.dirs).toEqual([]);
    await expect(openFileConfined(caller.roots, "x.txt")).rejects.toMatchObject({
      code: "ACCESS_DENIED",
    });
    await expect(
      openFileConfined(caller.roots, path.join(dir, "a", "x.txt")),
    ).rejects.toMatchObject({ code: "ACCESS_DENIED" });
  });
});

describe("AuthFileVerifier", () => {
  it("verifies tokens and picks up changes on reload; a bad file lets nobody in until fixed", async () => {
    const auth = path.join(dir, "auth.json");
    writeFileSync(auth, file([entry("alice", "ta", ["a", "b"])]));
    const events: string[] = [];
    const verifier = new AuthFileVerifier(auth, { log: (e) => events.push(e.event) });
    expect((await verifier.verify("ta"))?.roots.dirs).toHaveLength(2);
    expect(await verifier.verify("tb")).toBeUndefined();
    expect(verifier.unavailable()).toBeUndefined();

    writeFileSync(auth, file([entry("alice", "ta", ["a"]), entry("bob", "tb", ["b"])]));
    await verifier.reload();
    expect((await verifier.verify("ta"))?.roots.dirs).toEqual([path.join(dir, "a")]);
    expect((await verifier.verify("tb"))?.identity).toBe("bob");
    expect(verifier.names.sort()).toEqual(["alice", "bob"]);

    writeFileSync(auth, "{ half written");
    await verifier.reload();
    await verifier.reload();
    expect(await verifier.verify("tb")).toBeUndefined();
    expect(verifier.unavailable()).toMatch(/not valid JSON/);
    expect(events.filter((e) => e === "auth_file_invalid")).toHaveLength(1);

    writeFileSync(auth, file([entry("alice", "ta", ["a"])]));
    await verifier.reload();
    expect(verifier.unavailable()).toBeUndefined();
    expect((await verifier.verify("ta"))?.identity).toBe("alice");
    expect(await verifier.verify("tb")).toBeUndefined();
  });

  it("fails closed when the file is deleted, says so once, and reloads it when it is back", async () => {
    const auth = path.join(dir, "auth.json");
    const text = file([entry("alice", "ta", ["a"])]);
    writeFileSync(auth, text);
    const events: Array<{ event: string; level?: unknown; message: string }> = [];
    const verifier = new AuthFileVerifier(auth, { log: (e) => events.push(e) });
    expect((await verifier.verify("ta"))?.identity).toBe("alice");

    rmSync(auth);
    await verifier.reload();
    await verifier.reload();
    expect(await verifier.verify("ta")).toBeUndefined();
    expect(verifier.names).toEqual([]);
    expect(verifier.unavailable()).toMatch(/cannot read .*ENOENT/);
    const invalid = events.filter((e) => e.event === "auth_file_invalid");
    expect(invalid).toHaveLength(1);
    expect(invalid[0]!.level).toBe("error");
    expect(invalid[0]!.message).toMatch(/every request is refused \(401\)/);
    expect(invalid[0]!.message).not.toContain("ta");

    // The very same contents coming back are loaded again.
    writeFileSync(auth, text);
    await verifier.reload();
    expect(verifier.unavailable()).toBeUndefined();
    expect((await verifier.verify("ta"))?.identity).toBe("alice");
    expect(events.at(-1)?.event).toBe("auth_file_reloaded");
  });

  it("fails closed again on a bad file seen before, after a good one in between", async () => {
    const auth = path.join(dir, "auth.json");
    writeFileSync(auth, file([entry("alice", "ta", ["a"])]));
    const verifier = new AuthFileVerifier(auth);
    writeFileSync(auth, "{ bad");
    await verifier.reload();
    writeFileSync(auth, file([entry("alice", "ta", ["a"])]));
    await verifier.reload();
    expect((await verifier.verify("ta"))?.identity).toBe("alice");
    writeFileSync(auth, "{ bad");
    await verifier.reload();
    expect(await verifier.verify("ta")).toBeUndefined();
  });

  it("notices a change by itself (watch + poll)", async () => {
    const auth = path.join(dir, "auth.json");
    writeFileSync(auth, file([entry("alice", "ta", ["a"])]));
    let reloaded!: () => void;
    const reload = new Promise<void>((resolve) => {
      reloaded = resolve;
    });
    const log = (e: { event: string }) => e.event === "auth_file_reloaded" && reloaded();
    const verifier = new AuthFileVerifier(auth, { pollMs: 100, log }).watch();
    try {
      writeFileSync(auth, file([entry("bob", "tb", ["b"])]));
      // Nothing calls reload(): only the watcher or the poll can end this wait.
      await reload;
      expect((await verifier.verify("tb"))?.identity).toBe("bob");
      expect(await verifier.verify("ta")).toBeUndefined();
    } finally {
      verifier.close();
    }
  });

  it("refuses an unreadable file at start", () => {
    expect(() => new AuthFileVerifier(path.join(dir, "missing.json"))).toThrow(AuthFileError);
  });
});
