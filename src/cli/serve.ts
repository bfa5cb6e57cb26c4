/**
 * @module
 * `pagewise serve`: the MCP tools over stdio, or over HTTP with `--http`. The only command that
 * loads the MCP SDK and the tools' schemas.
 */
import path from "node:path";
import v8 from "node:v8";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Roots } from "../access/index.js";
import { createEngine, createMcpServer } from "../mcp/server.js";
import { PACKAGE_VERSION } from "../version.js";
import { parseCommandLine, withEnvironment } from "./arguments.js";
import { engineFrom } from "./engine.js";
import { HEAP_GROWING_PERCENT } from "./limits.js";
import { commandHelp } from "./options.js";
import { httpSettingsFrom, rootsFrom } from "./settings.js";
import { UsageError } from "./usage.js";

/** `serve`'s roots: `--root` and arguments, else `PAGEWISE_ROOTS`. */
function serveRoots(values: Record<string, unknown>, positionals: string[]): string[] {
  const flagged = [...((values.root as string[] | undefined) ?? []), ...positionals];
  if (flagged.length > 0) return flagged;
  const env = process.env.PAGEWISE_ROOTS;
  return env ? env.split(path.delimiter).filter((part) => part !== "") : [];
}

async function serveHttp(values: Record<string, unknown>): Promise<number> {
  const { verifier, ...http } = httpSettingsFrom(values);
  const engine = createEngine(await engineFrom(values, false));
  // Loaded only here: a stdio server never pays for the HTTP stack at start-up.
  const { runHttpServer } = await import("../mcp/http.js");
  try {
    await runHttpServer({
      engine,
      ...http,
      ...(verifier ? { verifier: verifier.watch() } : {}),
      ephemeralKey: values["cursor-key-file"] === undefined && !process.env.PAGEWISE_CURSOR_KEY,
      onClose: () => verifier?.close(),
    });
  } catch (err) {
    verifier?.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
      throw new UsageError(`cannot listen on ${http.host}:${http.port} (${code})`);
    throw err;
  }
  return 0;
}

/**
 * A server's garbage is many requests' pages, buffers and per-request SDK objects; V8 sizes its
 * heap for one big program on this machine's memory, so it lets that garbage pile up for hundreds
 * of MiB before collecting it. Two heap settings keep the peak near what is live (measured with
 * bench/http-memory.js, 60 clients; docs/http.md has the figures):
 * - the old generation grows by 30% of what survives a full collection, not by V8's adaptive
 *   factor (up to 4×): `tail` alone 202 → 112 MiB, `read` 187 → 108, `json_read` 199 → 131;
 * - the young generation keeps its first size (1 MiB semi-spaces) instead of growing to 16 MiB
 *   ones: requests' garbage dies young either way.
 * V8 reads both when a generation grows, so they take effect when set at run time (the size
 * limits, `--max-old-space-size` and the like, are fixed when the process starts).
 */
function boundHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString("--semi-space-growth-factor=1");
}

export async function serve(argv: string[]): Promise<number> {
  boundHeapGrowth();
  const parsed = parseCommandLine("serve", argv);
  if (parsed.values.help || parsed.values.version) {
    process.stdout.write(`${parsed.values.help ? commandHelp("serve") : PACKAGE_VERSION}\n`);
    return 0;
  }
  const rootDirs = serveRoots(parsed.values, parsed.positionals);
  const values: Record<string, unknown> = {
    ...withEnvironment("serve", parsed.values),
    root: rootDirs,
  };
  if (values.http !== undefined) return serveHttp(values);
  if (rootDirs.length === 0)
    throw new UsageError(
      "serve needs at least one --root DIR (or DIR arguments, or PAGEWISE_ROOTS)",
    );
  const roots: Roots = rootsFrom(rootDirs);
  const engine = createEngine(await engineFrom(values, false));
  const caller = { identity: "anonymous", roots };
  // The SDK's stdio entry decides the connection's protocol era (2026-07-28 or 2025) and builds
  // the instance from this factory.
  let closed!: () => void;
  const ended = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const stdio = serveStdio(() => createMcpServer(engine, caller), { onerror: () => {} });
  process.stderr.write(
    `pagewise ${PACKAGE_VERSION} serving MCP on stdio; roots: ${roots.dirs.join(", ")}; estimator: ${engine.estimator.name}\n`,
  );
  process.stdin.on("end", closed);
  process.stdin.on("close", closed);
  await ended;
  await stdio.close().catch(() => {});
  return 0;
}
