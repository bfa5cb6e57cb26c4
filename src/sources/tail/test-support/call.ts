/**
 * Test support: a tail call as the tool maps it (page parameters included) and a read of a line
 * cursor, both through the source pipeline, for the tail tests.
 */
import { PagewiseError, runSource } from "../../../core/index.js";
import type { SourceContext } from "../../shared/context.js";
import { createReadSource } from "../../text/index.js";
import { createTailSource } from "../tail.js";

/** The fields of a tail call, as the tool maps them (page parameters included). */
export interface TailRequest {
  path?: string;
  before?: string;
  after?: string;
  fromStart?: boolean;
  grep?: string;
  grepLiteral?: boolean;
  stallMs?: number;
  limit?: number;
  maxCharsPerItem?: number;
  maxTokens?: number;
  scanMaxBytes?: number;
}

const BUDGET = { name: "max_tokens", default: 8000, max: 100_000 };

export function tailPage(ctx: SourceContext, req: TailRequest): Promise<string> {
  if (req.before !== undefined && req.after !== undefined)
    return Promise.reject(new PagewiseError("INVALID_ARGUMENT", "Pass either before or after."));
  const cursor = req.before ?? req.after;
  return runSource(
    createTailSource(BUDGET),
    { codec: ctx.codec, identity: ctx.caller.identity, context: ctx },
    {
      ...(req.path !== undefined ? { path: req.path } : {}),
      ...(cursor !== undefined
        ? { cursorKind: req.before !== undefined ? "before" : "after" }
        : {}),
      ...(req.fromStart !== undefined ? { fromStart: req.fromStart } : {}),
      ...(req.grep !== undefined ? { grep: req.grep } : {}),
      ...(req.grepLiteral !== undefined ? { grepLiteral: req.grepLiteral } : {}),
      ...(req.stallMs !== undefined ? { stallMs: req.stallMs } : {}),
      ...(req.scanMaxBytes !== undefined ? { scanMaxBytes: req.scanMaxBytes } : {}),
    } as const,
    cursor,
    { max_tokens: req.maxTokens, limit: req.limit, max_chars_per_item: req.maxCharsPerItem },
  );
}

export function readPage(
  ctx: SourceContext,
  req: { cursor: string; maxTokens: number },
): Promise<string> {
  return runSource(
    createReadSource(BUDGET),
    { codec: ctx.codec, identity: ctx.caller.identity, context: ctx },
    {},
    req.cursor,
    { max_tokens: req.maxTokens },
  );
}
