/**
 * @module
 * Where a walk's last page left the engine, kept for the call that continues it. A json_read
 * cursor is self-contained, and resuming from it costs every page the same fixed work: open the
 * file through the roots (a thread-pool round trip per path component), check its version, read a
 * window around the resume point, rebuild the engine there (src/json resume), close the file; about
 * 1.3 ms of CPU and as much again waiting for the thread pool, for a page of 1,000 matches whose
 * own engine work is ~3 ms (docs/benchmarks.md). When the next call brings exactly the cursor a
 * page handed out, from the same caller under the same roots, the engine goes on instead: the same
 * open descriptor (confined when it was opened; its identity is still checked after every page), the
 * same tokenizer and evaluator, the matches it had read past the page's end first. Anything else
 * (another cursor, a second call with the same cursor, an entry expired or evicted) resumes from
 * the cursor as before, so no page depends on whether an entry was kept.
 */
import type { Roots } from "../../access/index.js";
import {
  encodeResume,
  type JsonFormat,
  type JsonMatch,
  type QueryLanguage,
  type ResumeState,
} from "../../json/index.js";
import { JSON_CONTINUATION_TTL_MS, JSON_CONTINUATIONS } from "../limits.js";
import type { FileRef } from "../shared/file-ref.js";
import { closeInBackground, type VersionedFile } from "../shared/versioned-file.js";
import type { ValueWindow } from "./window.js";

/** The engine's matches, batch by batch, with room to hand back what a page did not use. */
export class MatchFeed {
  #pending: JsonMatch[][] = [];
  constructor(readonly batches: AsyncGenerator<JsonMatch[], void, undefined>) {}

  /** The next batch (handed-back matches first), or null at the end. */
  async next(): Promise<JsonMatch[] | null> {
    const pending = this.#pending.shift();
    if (pending) return pending;
    const r = await this.batches.next();
    return r.done ? null : r.value;
  }

  /** Matches read but not used, to come first from the next `next()`. */
  handBack(matches: JsonMatch[]): void {
    if (matches.length > 0) this.#pending.unshift(matches);
  }

  async close(): Promise<void> {
    this.#pending = [];
    await this.batches.return(undefined).catch(() => undefined);
  }
}

/**
 * The engine's cancellation: the engine outlives the call that started it, so it follows the
 * signal of whichever call is reading it now.
 */
export class SignalRelay {
  readonly #controller = new AbortController();
  #unfollow: (() => void) | undefined;

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  follow(signal: AbortSignal | undefined): void {
    this.#unfollow?.();
    this.#unfollow = undefined;
    if (!signal) return;
    if (signal.aborted) {
      this.#controller.abort(signal.reason);
      return;
    }
    const abort = () => this.#controller.abort(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    this.#unfollow = () => signal.removeEventListener("abort", abort);
  }
}

/** What names one position of one walk: caller, file, version, query, and the resume state. */
export interface WalkPosition {
  readonly identity: string;
  readonly file: FileRef;
  readonly digest: Uint8Array;
  readonly format: JsonFormat;
  readonly language: QueryLanguage;
  readonly query: string;
  readonly resume: ResumeState;
}

export function positionKey(p: WalkPosition): string {
  return [
    p.identity,
    p.file.rootIndex,
    p.file.relPath,
    Buffer.from(p.digest).toString("hex"),
    p.format,
    p.language,
    p.query,
    Buffer.from(encodeResume(p.resume)).toString("hex"),
  ].join("\0");
}

/** A walk's engine, stopped right after the last match of the page that was returned. */
export interface Continuation {
  readonly roots: Roots;
  readonly basis: VersionedFile;
  readonly window: ValueWindow;
  readonly feed: MatchFeed;
  readonly relay: SignalRelay;
}

function dispose(c: Continuation): void {
  c.relay.follow(undefined);
  void c.feed.close().finally(() => closeInBackground(c.basis.close));
}

/** The kept engines of one server, at most JSON_CONTINUATIONS, each for JSON_CONTINUATION_TTL_MS. */
export class Continuations {
  readonly #entries = new Map<string, { c: Continuation; timer: NodeJS.Timeout }>();

  constructor(
    readonly max = JSON_CONTINUATIONS,
    readonly ttlMs = JSON_CONTINUATION_TTL_MS,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The engine stopped at `position`, taken out (a second call with it resumes from the cursor). */
  take(position: WalkPosition, roots: Roots): Continuation | undefined {
    const key = positionKey(position);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    clearTimeout(entry.timer);
    // Other roots (an auth file reloaded) decide confinement anew: open the file again.
    if (entry.c.roots !== roots) {
      dispose(entry.c);
      return undefined;
    }
    return entry.c;
  }

  keep(position: WalkPosition, c: Continuation): void {
    const key = positionKey(position);
    const old = this.#entries.get(key);
    if (old) {
      clearTimeout(old.timer);
      dispose(old.c);
    }
    const timer = setTimeout(() => {
      if (this.#entries.get(key)?.c === c) this.#entries.delete(key);
      dispose(c);
    }, this.ttlMs);
    timer.unref();
    this.#entries.set(key, { c, timer });
    while (this.#entries.size > this.max) {
      const [oldest, entry] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      clearTimeout(entry.timer);
      dispose(entry.c);
    }
  }
}
