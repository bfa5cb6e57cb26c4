/**
 * @module
 * `json_open` handles: a short random `file_id` naming a file's canonical path, its format (fixed for
 * the handle's life), the version it was opened at and its validation result.
 *
 * A handle does not hold a file descriptor: every read re-opens the canonical path through the
 * caller's roots, so access is re-checked on each call (a revoked root is ACCESS_DENIED at once) and
 * idle handles cost no descriptors. Handles are per process and per caller: an unknown, expired,
 * evicted or foreign `file_id` is HANDLE_EXPIRED. They expire after an idle TTL; past the maximum
 * count the least recently used one is closed.
 */
import { randomBytes } from "node:crypto";
import { PagewiseError } from "../../core/index.js";
import type { JsonFormat } from "../../json/index.js";
import { DEFAULT_JSON_HANDLE_TTL_MS, DEFAULT_MAX_JSON_HANDLES } from "../limits.js";
import { Continuations } from "./continuations.js";

export interface JsonHandle {
  readonly fileId: string;
  /** The identity that opened it; other callers cannot see it. */
  readonly identity: string;
  /** Canonical absolute path. */
  readonly realPath: string;
  readonly format: JsonFormat;
  readonly digest: Uint8Array;
  readonly fingerprint: Uint8Array;
  readonly version: string;
  lastUsed: number;
}

export interface JsonHandleOptions {
  ttlMs?: number;
  maxHandles?: number;
  now?: () => number;
}

export class JsonHandles {
  readonly #handles = new Map<string, JsonHandle>();
  /** Engines of json_read walks kept where their last page ended (continuations.ts). */
  readonly continuations = new Continuations();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: JsonHandleOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_JSON_HANDLE_TTL_MS;
    this.#max = options.maxHandles ?? DEFAULT_MAX_JSON_HANDLES;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    this.#sweep();
    return this.#handles.size;
  }

  add(handle: Omit<JsonHandle, "fileId" | "lastUsed">): JsonHandle {
    this.#sweep();
    const entry: JsonHandle = {
      ...handle,
      fileId: `f_${randomBytes(9).toString("base64url")}`,
      lastUsed: this.#now(),
    };
    this.#handles.set(entry.fileId, entry);
    while (this.#handles.size > this.#max) {
      const oldest = this.#handles.keys().next().value;
      if (oldest === undefined) break;
      this.#handles.delete(oldest);
    }
    return entry;
  }

  /** The live handle `fileId` of `identity` (refreshing its idle time), or HANDLE_EXPIRED. */
  get(fileId: string, identity: string): JsonHandle {
    this.#sweep();
    const entry = this.#handles.get(fileId);
    if (!entry || entry.identity !== identity) throw handleExpired(fileId);
    entry.lastUsed = this.#now();
    // Most recently used last (eviction takes the first).
    this.#handles.delete(fileId);
    this.#handles.set(fileId, entry);
    return entry;
  }

  /** Closes a handle; false when it was not open (closed before, expired, unknown, foreign). */
  close(fileId: string, identity: string): boolean {
    this.#sweep();
    const entry = this.#handles.get(fileId);
    if (!entry || entry.identity !== identity) return false;
    this.#handles.delete(fileId);
    return true;
  }

  #sweep(): void {
    const cutoff = this.#now() - this.#ttlMs;
    for (const [id, h] of this.#handles) if (h.lastUsed < cutoff) this.#handles.delete(id);
  }
}

export function handleExpired(fileId: string): PagewiseError {
  return new PagewiseError(
    "HANDLE_EXPIRED",
    `No open JSON handle ${JSON.stringify(fileId)}: it was closed, expired after being idle, or belongs to another server process.`,
    {
      hint: "Call json_open again for a new file_id, or call json_read with path instead of file_id (no handle needed). Cursors keep working without a handle.",
    },
  );
}

/** One registry per server (keyed by its settings object, shared by every request it answers). */
const registries = new WeakMap<object, JsonHandles>();

export function handlesFor(
  owner: object,
  options: { ttlMs?: number | undefined; maxHandles?: number | undefined },
): JsonHandles {
  let r = registries.get(owner);
  if (!r) {
    r = new JsonHandles({
      ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
      ...(options.maxHandles !== undefined ? { maxHandles: options.maxHandles } : {}),
    });
    registries.set(owner, r);
  }
  return r;
}
