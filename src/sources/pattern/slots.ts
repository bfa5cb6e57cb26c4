/**
 * @module
 * A bounded number of slots shared by callers. Slots bound what runs at once (worker threads,
 * searches in progress); the keys make the sharing fair between callers (an identity over HTTP):
 *
 * - a freed slot goes to the waiting caller that holds the fewest, earliest first among equals, so
 *   a caller that queued a hundred calls does not make another caller wait behind all of them;
 * - `perKey`, when below `max`, is the most one caller may hold at once, so whatever one caller
 *   runs, the rest stay free for the others.
 *
 * Calls that give no key share one. A cancelled wait leaves the queue.
 */
import { PagewiseError } from "../../core/index.js";

/** The key of calls that give none. */
const SHARED_KEY = "";

interface Waiter {
  readonly key: string;
  readonly grant: () => void;
}

export class Slots {
  private live = 0;
  private readonly held = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly max: number,
    private readonly perKey: number = max,
  ) {}

  /** Slots that a call of `key` would get now, without waiting. */
  free(key: string = SHARED_KEY): number {
    return Math.max(0, Math.min(this.max - this.live, this.perKey - this.heldBy(key)));
  }

  async acquire(signal: AbortSignal | undefined, key: string = SHARED_KEY): Promise<void> {
    signal?.throwIfAborted();
    if (this.waiting.length === 0 && this.free(key) > 0) {
      this.take(key);
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new PagewiseError("CANCELLED", "The request was cancelled before it finished."));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
      // A caller under its share may go ahead of others that wait for theirs.
      this.grantWaiting();
    });
  }

  release(key: string = SHARED_KEY): void {
    this.live--;
    const left = this.heldBy(key) - 1;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
    this.grantWaiting();
  }

  /** Runs `work` in a slot of `key`. */
  async run<T>(
    signal: AbortSignal | undefined,
    work: () => Promise<T>,
    key: string = SHARED_KEY,
  ): Promise<T> {
    await this.acquire(signal, key);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  private heldBy(key: string): number {
    return this.held.get(key) ?? 0;
  }

  private take(key: string): void {
    this.live++;
    this.held.set(key, this.heldBy(key) + 1);
  }

  /** Grants free slots to waiters: the caller holding the fewest first, in arrival order on ties. */
  private grantWaiting(): void {
    while (this.live < this.max) {
      let best: number | undefined;
      for (let i = 0; i < this.waiting.length; i++) {
        const held = this.heldBy(this.waiting[i]!.key);
        if (held >= this.perKey) continue;
        if (best === undefined || held < this.heldBy(this.waiting[best]!.key)) best = i;
      }
      if (best === undefined) return;
      const [waiter] = this.waiting.splice(best, 1);
      this.take(waiter!.key);
      waiter!.grant();
    }
  }
}
