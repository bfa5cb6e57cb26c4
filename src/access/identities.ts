/**
 * @module
 * Identities for serving over HTTP: a bearer token maps to a named caller with its own roots.
 *
 * `TokenVerifier` is the seam: the HTTP layer only asks `verify(token)` on every request, so an
 * OAuth token-introspection or JWT verifier can replace the auth file without touching transport
 * code. `AuthFileVerifier` is the built-in one: a JSON file of SHA-256 token hashes, re-read when it
 * changes (fs.watch on its directory, plus a poll), so a revoked root or a removed identity takes
 * effect on the very next request without a restart. A file that is deleted, unreadable or invalid
 * while serving fails closed: no identity is in force until it is valid again.
 *
 * Tokens are never stored, logged or put in errors: only their SHA-256 is compared.
 */
import { createHash } from "node:crypto";
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Caller } from "./caller.js";
import { Roots, resolveRoot, resolveRootSync } from "./roots.js";

/** Who a verified token belongs to: a caller (identity name + roots). */
export type Identity = Caller;

/** Turns a bearer token into an identity, or `undefined` when the token is unknown. */
export interface TokenVerifier {
  verify(token: string): Promise<Identity | undefined>;
  /**
   * Why no token can be verified right now (e.g. the auth file is gone or invalid), or undefined.
   * While it says something, every request is refused with 401 and that reason is not shown to
   * clients (it is for the operator's log).
   */
  unavailable?(): string | undefined;
}

/** How often the auth file is re-read even when no change event arrives, in milliseconds. */
export const AUTH_FILE_POLL_MS = 500;

/** The lowercase hex SHA-256 of a token, as stored in `token_sha256`. */
export function tokenSha256(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The token of an `Authorization: Bearer TOKEN` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  return match ? match[1] : undefined;
}

/** An auth file that could not be used; the message says what to fix (never a token). */
export class AuthFileError extends Error {}

export interface AuthFileContents {
  /** Identities by token hash. */
  readonly byHash: ReadonlyMap<string, Identity>;
  /** Problems that did not make the file unusable (e.g. a root that does not exist). */
  readonly warnings: readonly string[];
}

/** One identity as the file gives it: its roots absolute, not yet resolved. */
interface AuthEntry {
  readonly name: string;
  /** The token's SHA-256, lowercase hex. */
  readonly key: string;
  readonly dirs: readonly string[];
}

/**
 * Parses an auth file: `{"identities":[{"name","token_sha256","roots":[DIR…]}]}`. Relative roots are
 * resolved against `baseDir` (the file's directory). A root that does not exist is left out with a
 * warning (failing closed for that root); an identity with no usable root may authenticate but
 * reads nothing. Resolves the roots synchronously: for start-up (`parseAuthFileAsync` on reload).
 */
export function parseAuthFile(text: string, baseDir: string): AuthFileContents {
  const entries = parseAuthEntries(text, baseDir);
  const resolved = new Map<string, string | Error>();
  for (const dir of entries.flatMap((e) => e.dirs)) {
    try {
      resolved.set(dir, resolveRootSync(dir));
    } catch (err) {
      resolved.set(dir, err as Error);
    }
  }
  return contentsOf(entries, resolved);
}

/** `parseAuthFile` with the roots resolved off the thread that serves requests. */
export async function parseAuthFileAsync(text: string, baseDir: string): Promise<AuthFileContents> {
  const entries = parseAuthEntries(text, baseDir);
  const dirs = [...new Set(entries.flatMap((e) => e.dirs))];
  const settled = await Promise.allSettled(dirs.map(resolveRoot));
  const resolved = new Map<string, string | Error>(
    settled.map((r, i) => [dirs[i]!, r.status === "fulfilled" ? r.value : (r.reason as Error)]),
  );
  return contentsOf(entries, resolved);
}

function parseAuthEntries(text: string, baseDir: string): AuthEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new AuthFileError(`not valid JSON (${(err as Error).message})`);
  }
  const list = (doc as { identities?: unknown } | null)?.identities;
  if (!Array.isArray(list)) throw new AuthFileError('expected {"identities": [...]}');
  const keys = new Set<string>();
  const names = new Set<string>();
  return list.map((entry: unknown, i) => {
    const where = `identities[${i}]`;
    if (typeof entry !== "object" || entry === null)
      throw new AuthFileError(`${where} is not an object`);
    const { name, token_sha256: hash, roots } = entry as Record<string, unknown>;
    if (typeof name !== "string" || name === "" || /[\u0000-\u001f\u007f]/.test(name))
      throw new AuthFileError(
        `${where}.name must be a non-empty string without control characters`,
      );
    if (names.has(name)) throw new AuthFileError(`identity name "${name}" appears twice`);
    if (typeof hash !== "string" || !/^[0-9a-fA-F]{64}$/.test(hash))
      throw new AuthFileError(`${where}.token_sha256 must be 64 hex digits (the token's SHA-256)`);
    const key = hash.toLowerCase();
    if (keys.has(key)) throw new AuthFileError(`${where}.token_sha256 is used twice`);
    if (!Array.isArray(roots) || roots.some((r) => typeof r !== "string" || r === ""))
      throw new AuthFileError(`${where}.roots must be an array of directory paths`);
    names.add(name);
    keys.add(key);
    return { name, key, dirs: (roots as string[]).map((dir) => path.resolve(baseDir, dir)) };
  });
}

/** The identities, each with the roots that resolved (`resolved`: a canonical path or why not). */
function contentsOf(
  entries: readonly AuthEntry[],
  resolved: ReadonlyMap<string, string | Error>,
): AuthFileContents {
  const byHash = new Map<string, Identity>();
  const warnings: string[] = [];
  for (const { name, key, dirs } of entries) {
    const usable: string[] = [];
    const reals: string[] = [];
    for (const dir of dirs) {
      const real = resolved.get(dir)!;
      if (typeof real === "string") {
        usable.push(dir);
        reals.push(real);
      } else {
        warnings.push(`identity "${name}": ${real.message}; left out`);
      }
    }
    byHash.set(key, {
      identity: name,
      roots: usable.length > 0 ? new Roots(usable, { resolved: reals }) : Roots.none(),
    });
  }
  return { byHash, warnings };
}

export interface AuthFileVerifierOptions {
  /** Poll interval in ms (default `AUTH_FILE_POLL_MS`). */
  pollMs?: number;
  /** Receives reload events and problems, for logs (never tokens). */
  log?: (event: { event: string; message: string; [k: string]: unknown }) => void;
}

/** No identity: what is in force while the auth file is missing or invalid. */
const NO_IDENTITIES: AuthFileContents = { byHash: new Map(), warnings: [] };

/**
 * The built-in verifier: identities from a JSON file, re-read on change. An unreadable or invalid
 * file at start is an `AuthFileError`. A file that is deleted, unreadable or invalid on reload
 * fails closed: every identity is dropped (every request gets 401) and a `level: "error"` line is
 * logged once, until the file is valid again and its identities reload. Write the file atomically
 * (write a temporary file, then rename) so no request ever sees it half-written.
 */
export class AuthFileVerifier implements TokenVerifier {
  readonly file: string;
  #contents: AuthFileContents;
  #digest: string;
  readonly #pollMs: number;
  readonly #log: NonNullable<AuthFileVerifierOptions["log"]>;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> | undefined;
  #again = false;
  /** Digest of the last invalid contents seen, so one bad file is reported once, not every poll. */
  #badDigest: string | undefined;
  /** Why no identity is in force (file gone or invalid), or undefined while the file is valid. */
  #unavailable: string | undefined;

  constructor(file: string, options: AuthFileVerifierOptions = {}) {
    this.file = path.resolve(file);
    this.#pollMs = options.pollMs ?? AUTH_FILE_POLL_MS;
    this.#log = options.log ?? (() => {});
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (err) {
      throw new AuthFileError(`cannot read ${this.file}: ${(err as Error).message}`);
    }
    try {
      this.#contents = parseAuthFile(text, path.dirname(this.file));
    } catch (err) {
      throw new AuthFileError(`${this.file}: ${(err as Error).message}`);
    }
    this.#digest = digest(text);
    for (const warning of this.#contents.warnings)
      this.#log({ event: "auth_file_warning", message: warning });
  }

  /** Names of the identities currently in force. */
  get names(): string[] {
    return [...this.#contents.byHash.values()].map((c) => c.identity);
  }

  async verify(token: string): Promise<Identity | undefined> {
    if (this.#unavailable !== undefined) return undefined;
    return this.#contents.byHash.get(tokenSha256(token));
  }

  /** Why every request is refused right now (the file is gone or invalid), or undefined. */
  unavailable(): string | undefined {
    return this.#unavailable;
  }

  /** Starts watching the file (fs.watch on its directory, plus a poll). Idempotent. */
  watch(): this {
    if (this.#timer) return this;
    this.#timer = setInterval(() => void this.reload(), this.#pollMs);
    this.#timer.unref();
    try {
      const base = path.basename(this.file);
      this.#watcher = watch(path.dirname(this.file), { persistent: false }, (_event, name) => {
        if (name === null || name === base) void this.reload();
      });
      this.#watcher.on("error", () => {
        // The poll still runs.
      });
    } catch {
      // Some filesystems cannot be watched; the poll covers them.
    }
    return this;
  }

  /** Stops watching. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  /** Re-reads the file now if it changed. Concurrent calls coalesce. */
  reload(): Promise<void> {
    if (this.#reloading) {
      this.#again = true;
      return this.#reloading;
    }
    this.#reloading = (async () => {
      do {
        this.#again = false;
        await this.#reloadOnce();
      } while (this.#again);
    })().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  async #reloadOnce(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      this.#badDigest = undefined;
      this.#failClosed(
        `cannot read ${this.file} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
      return;
    }
    const d = digest(text);
    if (d === this.#digest || d === this.#badDigest) return;
    let contents: AuthFileContents;
    try {
      contents = await parseAuthFileAsync(text, path.dirname(this.file));
    } catch (err) {
      this.#badDigest = d;
      this.#failClosed(`${this.file} is invalid: ${(err as Error).message}`);
      return;
    }
    this.#contents = contents;
    this.#digest = d;
    this.#badDigest = undefined;
    this.#unavailable = undefined;
    for (const warning of contents.warnings)
      this.#log({ event: "auth_file_warning", message: warning });
    this.#log({
      event: "auth_file_reloaded",
      message: `${contents.byHash.size} identities in force`,
      identities: contents.byHash.size,
    });
  }

  /** Drops every identity until the file is valid again; logs once per distinct reason. */
  #failClosed(reason: string): void {
    this.#contents = NO_IDENTITIES;
    // Forget the last good contents, so the same file coming back reloads them.
    this.#digest = "";
    if (this.#unavailable === reason) return;
    this.#unavailable = reason;
    this.#log({
      event: "auth_file_invalid",
      level: "error",
      message: `${reason}; NO IDENTITY IS IN FORCE: every request is refused (401) until the auth file is valid again`,
    });
  }
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
