import type { Roots } from "./roots.js";

/** Who is calling and what they may read. Cursors are bound to `identity`. */
export interface Caller {
  /** Stable identity name; `anonymous` for stdio and unauthenticated loopback. */
  readonly identity: string;
  readonly roots: Roots;
}
