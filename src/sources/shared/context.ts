import type { Caller } from "../../access/index.js";
import type { CursorCodec, Estimator, FileVersions } from "../../core/index.js";

/** What every source needs to serve one call: who asks, how to sign, how to count, what it saw. */
export interface SourceContext {
  readonly caller: Caller;
  readonly codec: CursorCodec;
  readonly estimator: Estimator;
  readonly versions: FileVersions;
  /** Aborted when the request is cancelled. */
  readonly signal?: AbortSignal;
}
