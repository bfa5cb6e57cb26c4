import type { Caller } from "../access/index.js";
import {
  type CursorCodec,
  type Estimator,
  type FileVersions,
  MAX_TOKENS_PARAM,
  type PageParam,
  reservingWalk,
  runSource,
  type Source,
} from "../core/index.js";
import type { JsonLimits } from "../json/index.js";
import type { SourceContext } from "../sources/index.js";

/** Server-wide settings every tool reads (validated once, at start). */
export interface ToolSettings {
  /** Budget for calls without `max_tokens` (`--default-max-tokens`). */
  readonly defaultMaxTokens: number;
  /** Largest budget honoured (`--max-tokens-cap`). */
  readonly maxTokensCap: number;
  /** Ceiling of `read` in line mode (`--max-read-tokens`). */
  readonly maxReadTokens: number;
  /** Directory entries one `list`/`search` walk may read (`--max-walk-entries`; default 2,000,000). */
  readonly maxWalkEntries?: number;
  /** How long a search may run without progress before it is stopped (`--search-stall-ms`; default 5000). */
  readonly searchStallMs?: number;
  /** Limits of the JSON engine (`--json-max-depth` etc.); unset ones keep their defaults. */
  readonly jsonLimits?: Partial<JsonLimits>;
  /** Idle time after which a `json_open` handle expires (`--json-handle-ttl-ms`; default 15 min). */
  readonly jsonHandleTtlMs?: number;
  /** Handles open at once per server process (`--max-json-handles`; default 64; the least recently used is closed). */
  readonly maxJsonHandles?: number;
}

/** Everything a tool call needs: the caller, the engine's shared parts, and the request's signal. */
export interface ToolContext {
  readonly caller: Caller;
  readonly codec: CursorCodec;
  readonly estimator: Estimator;
  readonly versions: FileVersions;
  readonly settings: ToolSettings;
  readonly signal?: AbortSignal;
  /** Reports progress of a long call (MCP progress notifications when the client asked for them). */
  readonly progress?: (progress: number, total?: number) => void;
}

/** The budget parameter of every source: the server's default, lowered to the server's cap. */
export function budgetParam(settings: ToolSettings): PageParam {
  return {
    ...MAX_TOKENS_PARAM,
    default: settings.defaultMaxTokens,
    max: settings.maxTokensCap,
    maxReason: "the server's cap",
  };
}

/**
 * Runs one call of `source` through the pipeline (core/source): `cursor` continues a walk, `given`
 * holds the page parameters the call passed (`max_tokens`, `limit`, …; undefined when left out).
 */
export function runTool<A, S>(
  source: Source<A, S, SourceContext>,
  ctx: ToolContext,
  args: A,
  cursor: string | undefined,
  given: Readonly<Record<string, number | undefined>>,
): Promise<string> {
  return runSource(
    source,
    {
      codec: ctx.codec,
      identity: ctx.caller.identity,
      context: ctx,
      reservingWalk: (context, reserve) => ({
        ...context,
        estimator: reservingWalk(context.estimator, reserve),
      }),
    },
    args,
    cursor,
    given,
  );
}

/** `load`, run by the first call of the returned function; later calls share its promise. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}

/**
 * Each tool's source, loaded by the tool's first call: starting the server and answering
 * `tools/list` load none of them, and a call loads only its own source. Perf: a first `read`
 * loads 10–13 ms of modules instead of the whole sources layer's 80–100 ms (the walker, the
 * pattern engines, the JSON engine).
 */
export const loadSource = {
  text: once(() => import("../sources/text/index.js")),
  listing: once(() => import("../sources/listing/index.js")),
  search: once(() => import("../sources/search/index.js")),
  tail: once(() => import("../sources/tail/index.js")),
  json: once(() => import("../sources/json-pages/index.js")),
};
