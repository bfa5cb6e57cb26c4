/**
 * What the server loads, and when: starting it and answering `tools/list` load no source, and a
 * call loads its own source and what sources share, never the others (the walker, the pattern
 * engines, the JSON engine). Modules are logged as the process loads them (test/support/module-log.mjs).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadedModules, moduleLogEnv } from "./support/loaded-modules.js";
import { startServer, tempDir } from "./support/server.js";

const SOURCE_FOLDERS = [
  "sources/text/",
  "sources/listing/",
  "sources/search/",
  "sources/tail/",
  "sources/json-pages/",
  "sources/walk/",
  "sources/pattern/",
  "json/tokenizer",
];

describe("lazy loading", () => {
  it("loads no source to start and answer tools/list, and only its own source on a call", async () => {
    const { dir, cleanup } = tempDir();
    const root = path.join(dir, "root");
    mkdirSync(root);
    writeFileSync(path.join(root, "a.txt"), "one line\n");
    const log = path.join(dir, "modules.log");
    writeFileSync(log, "");
    const server = await startServer(["--root", root], moduleLogEnv(log));
    const loadedFrom = (folders: string[]) =>
      folders.filter((folder) => loadedModules(log).some((m) => m.startsWith(folder)));
    try {
      await server.client.listTools();
      expect(loadedModules(log)).toContain("tools/read.js");
      expect(loadedFrom(SOURCE_FOLDERS)).toEqual([]);

      expect((await server.call("read", { path: "a.txt" })).text).toBe("one line\n");
      expect(loadedFrom(SOURCE_FOLDERS)).toEqual(["sources/text/"]);

      await server.call("list", {});
      expect(loadedFrom(SOURCE_FOLDERS)).toEqual([
        "sources/text/",
        "sources/listing/",
        "sources/walk/",
        "sources/pattern/",
      ]);
    } finally {
      await server.close();
      cleanup();
    }
  });
});
