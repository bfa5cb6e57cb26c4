/**
 * @module
 * Turning command-line options into validated server settings, once, at start.
 */
import { existsSync, mkdirSync, readFileSync, type Stats, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { AuthFileVerifier, type Caller, Roots } from "../access/index.js";
import {
  type CursorKey,
  cursorKeyFromSecret,
  DEFAULT_MAX_READ_TOKENS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOKENS_CAP,
  ephemeralCursorKey,
  MIN_CURSOR_KEY_BYTES,
} from "../core/index.js";
import type { JsonLimits } from "../json/index.js";
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONCURRENT_SCANS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SCAN_QUEUE_MS,
} from "../mcp/limits.js";
import { isLoopbackHost, parseListenAddress } from "../mcp/listen.js";
import {
  DEFAULT_JSON_HANDLE_TTL_MS,
  DEFAULT_MAX_JSON_HANDLES,
  DEFAULT_MAX_WALK_ENTRIES,
  DEFAULT_SEARCH_STALL_MS,
} from "../sources/limits.js";
import type { ToolSettings } from "../tools/index.js";
import { UsageError } from "./usage.js";

export { UsageError };

export function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} takes a whole number ≥ 1 (got "${value}")`);
  return n;
}

/** `--json-*` options, each setting one limit of the JSON engine (see json/limits.ts). */
export const JSON_LIMIT_FLAGS: Readonly<Record<string, keyof JsonLimits>> = {
  "json-max-depth": "maxDepth",
  "json-max-string-bytes": "maxStringBytes",
  "json-max-number-bytes": "maxNumberBytes",
  "json-max-record-bytes": "maxRecordBytes",
  "json-max-object-members": "maxObjectMembers",
  "json-max-buffered-matches": "maxBufferedMatches",
  "json-max-filter-value-bytes": "maxFilterValueBytes",
  "json-max-query-threads": "maxQueryThreads",
  "json-max-regex-states": "maxRegexStates",
  "json-max-regex-input-chars": "maxRegexInputChars",
  "json-max-regex-steps": "maxRegexSteps",
  "json-probe-bytes": "probeBytes",
};

/** The whole-number option `--name` from parsed `values`, or `fallback` when it was not given. */
function intOption(values: Record<string, unknown>, name: string, fallback: number): number {
  return positiveInt(name, values[name] as string | undefined, fallback);
}

export function settingsFrom(values: Record<string, unknown>): ToolSettings {
  const defaultMaxTokens = intOption(values, "default-max-tokens", DEFAULT_MAX_TOKENS);
  const maxTokensCap = intOption(values, "max-tokens-cap", DEFAULT_MAX_TOKENS_CAP);
  const maxReadTokens = intOption(values, "max-read-tokens", DEFAULT_MAX_READ_TOKENS);
  const maxWalkEntries = intOption(values, "max-walk-entries", DEFAULT_MAX_WALK_ENTRIES);
  const searchStallMs = intOption(values, "search-stall-ms", DEFAULT_SEARCH_STALL_MS);
  if (defaultMaxTokens > maxTokensCap) {
    throw new UsageError(
      `--default-max-tokens (${defaultMaxTokens}) is above --max-tokens-cap (${maxTokensCap})`,
    );
  }
  const jsonLimits: Partial<JsonLimits> = {};
  for (const [flag, key] of Object.entries(JSON_LIMIT_FLAGS)) {
    const raw = values[flag] as string | undefined;
    if (raw !== undefined) jsonLimits[key] = positiveInt(flag, raw, 1);
  }
  const jsonHandleTtlMs = intOption(values, "json-handle-ttl-ms", DEFAULT_JSON_HANDLE_TTL_MS);
  const maxJsonHandles = intOption(values, "max-json-handles", DEFAULT_MAX_JSON_HANDLES);
  return {
    defaultMaxTokens,
    maxTokensCap,
    maxReadTokens,
    maxWalkEntries,
    searchStallMs,
    jsonLimits,
    jsonHandleTtlMs,
    maxJsonHandles,
  };
}

/** A key from user-supplied material, refused as a usage error naming where it came from. */
function keyFrom(material: string, source: string): CursorKey {
  const bytes = Buffer.byteLength(material.trim(), "utf8");
  if (bytes < MIN_CURSOR_KEY_BYTES) {
    throw new UsageError(
      `${source} holds ${bytes} bytes; a cursor key needs at least ${MIN_CURSOR_KEY_BYTES} (for example: head -c 32 /dev/urandom | base64)`,
    );
  }
  return cursorKeyFromSecret(material);
}

/**
 * The cursor key: `--cursor-key-file`, else `PAGEWISE_CURSOR_KEY`, else (for `serve`) a random
 * per-process key, or (for one-shot terminal commands, which must accept the cursor the previous
 * command printed) a key kept in the user's config directory.
 */
export function loadCursorKey(keyFile: string | undefined, persistentFallback: boolean): CursorKey {
  if (keyFile !== undefined) {
    let material: Buffer;
    try {
      material = readFileSync(keyFile);
    } catch (err) {
      throw new UsageError(`cannot read --cursor-key-file ${keyFile}: ${(err as Error).message}`);
    }
    return keyFrom(material.toString("utf8"), `--cursor-key-file ${keyFile}`);
  }
  const env = process.env.PAGEWISE_CURSOR_KEY;
  if (env !== undefined && env !== "") return keyFrom(env, "PAGEWISE_CURSOR_KEY");
  if (!persistentFallback) return ephemeralCursorKey();
  const dir = path.join(process.env.XDG_CONFIG_HOME ?? path.join(homedir(), ".config"), "pagewise");
  const file = path.join(dir, "cursor.key");
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const key = ephemeralCursorKey();
    writeFileSync(file, key.secret.toString("base64"), { mode: 0o600, flag: "wx" });
  }
  return keyFrom(readFileSync(file, "utf8"), file);
}

/**
 * Roots given by the user (`--root`, `serve DIR…`, `PAGEWISE_ROOTS`), each an existing directory;
 * anything else is a usage error at start rather than an empty server.
 */
export function rootsFrom(dirs: readonly string[], source = "--root"): Roots {
  for (const dir of dirs) {
    let stats: Stats;
    try {
      stats = statSync(dir);
    } catch {
      throw new UsageError(`${source} ${dir}: no such directory`);
    }
    if (!stats.isDirectory()) {
      throw new UsageError(
        `${source} ${dir} is not a directory: give the directory that holds the files to serve`,
      );
    }
  }
  try {
    return new Roots(dirs);
  } catch (err) {
    throw new UsageError(`${source}: ${(err as Error).message}`);
  }
}

/** What `serve --http` needs besides the engine, validated once at start. */
export interface HttpServeSettings {
  host: string;
  port: number;
  /** Set with `--auth-file`; its watcher is started by the caller. */
  verifier?: AuthFileVerifier;
  /** The caller of every request without `--auth-file` (roots from `--root`). */
  anonymous?: Caller;
  allowedHosts: string[];
  publicUrl?: string;
  maxConcurrentScans: number;
  scanQueueMs: number;
  maxBodyBytes: number;
  requestTimeoutMs: number;
}

/**
 * Options of `serve --http`. Refuses (as a usage error, exit 2) a non-loopback address without
 * `--auth-file`, and `--root` together with `--auth-file` (roots then come from the file).
 */
export function httpSettingsFrom(values: Record<string, unknown>): HttpServeSettings {
  let listen: { host: string; port: number };
  try {
    listen = parseListenAddress(values.http as string);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const authFile = values["auth-file"] as string | undefined;
  const rootDirs = (values.root as string[] | undefined) ?? [];
  if (authFile === undefined && !isLoopbackHost(listen.host)) {
    throw new UsageError(
      `refusing to serve on ${listen.host} without --auth-file: anyone who can reach that address could read the roots. Bind a loopback address (127.0.0.1, ::1, localhost), or give --auth-file FILE so every request must carry a bearer token.`,
    );
  }
  if (authFile !== undefined && rootDirs.length > 0) {
    throw new UsageError(
      "--root is not used with --auth-file: each identity's roots come from the auth file",
    );
  }
  let verifier: AuthFileVerifier | undefined;
  let anonymous: Caller | undefined;
  if (authFile !== undefined) {
    try {
      verifier = new AuthFileVerifier(authFile, {
        log: (event) =>
          process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`),
      });
    } catch (err) {
      throw new UsageError(`--auth-file: ${(err as Error).message}`);
    }
  } else {
    if (rootDirs.length === 0)
      throw new UsageError("serve needs at least one --root DIR (or --auth-file FILE)");
    anonymous = { identity: "anonymous", roots: rootsFrom(rootDirs) };
  }
  const publicUrl = values["public-url"] as string | undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(publicUrl))
    throw new UsageError(`--public-url takes an http(s) URL (got "${publicUrl}")`);
  const scanQueue = values["scan-queue-ms"] as string | undefined;
  const scanQueueMs = scanQueue === undefined ? DEFAULT_SCAN_QUEUE_MS : Number(scanQueue);
  if (!Number.isInteger(scanQueueMs) || scanQueueMs < 0)
    throw new UsageError(`--scan-queue-ms takes a whole number ≥ 0 (got "${scanQueue}")`);
  return {
    ...listen,
    ...(verifier ? { verifier } : {}),
    ...(anonymous ? { anonymous } : {}),
    allowedHosts: (values["allowed-host"] as string[] | undefined) ?? [],
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    maxConcurrentScans: intOption(values, "max-concurrent-scans", DEFAULT_MAX_CONCURRENT_SCANS),
    scanQueueMs,
    maxBodyBytes: intOption(values, "max-body-bytes", DEFAULT_MAX_BODY_BYTES),
    requestTimeoutMs: intOption(values, "request-timeout-ms", DEFAULT_REQUEST_TIMEOUT_MS),
  };
}
