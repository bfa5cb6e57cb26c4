/**
 * @module
 * Argument schemas shared by the tools, and the translation of validation failures into
 * INVALID_ARGUMENT errors that say which argument was wrong, which limit it broke and what to pass
 * instead. The published JSON Schemas carry the same bounds validation enforces.
 */
import { type core, z } from "zod";
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOKENS_CAP, PagewiseError } from "../core/index.js";

/**
 * Largest count, offset or character length an argument accepts (2^50). Far beyond any real file,
 * and small enough that the sum of two such values is still an exact integer (2^51 < 2^53) and fits
 * a cursor's integer fields.
 */
export const MAX_COUNT_ARG = 2 ** 50;
/** Largest `max_tokens` accepted; anything above the server's cap is lowered to it and reported. */
export const MAX_TOKENS_ARG = Number.MAX_SAFE_INTEGER;

/** The last sentence of every tool's description: the default budget and the cap. */
export const BUDGET_NOTE = `max_tokens: ${DEFAULT_MAX_TOKENS} by default; at most ${DEFAULT_MAX_TOKENS_CAP} unless the server was started with a higher cap; use less when your client's limit is lower.`;

/**
 * A whole number in [`min`, `max`], published as `{"type":"integer","minimum":…,"maximum":…}`.
 * Bounds describe what is refused; "larger is lowered" limits (page sizes, budgets) take their
 * lowering in the tool, below `max`.
 */
export function wholeNumber(min: number, max: number, description: string) {
  return z
    .int({
      error: (issue) =>
        issue.code === "too_big" ? `must be at most ${max}` : "must be a whole number",
    })
    .min(min, { error: `must be at least ${min}` })
    .max(max, { error: `must be at most ${max}` })
    .describe(description);
}

export const maxTokensArg = wholeNumber(
  1,
  MAX_TOKENS_ARG,
  "Token budget for the whole response (the serialized page). Larger values are lowered to the server's cap and the page says so.",
).optional();

export const cursorArg = z
  .string()
  .min(1)
  .describe("Continuation cursor from a previous page's next_cursor; copy it exactly.")
  .optional();

/**
 * Keys agents send by habit, and what to pass instead (the first alternative the schema has wins).
 * `cursor` on a tool that pages both ways (tail) maps to its two direction-bound cursors.
 */
const KEY_ALTERNATIVES: Record<string, readonly string[]> = {
  cursor: ["before", "after", "file_id"],
  next_cursor: ["cursor", "before", "after"],
  file: ["path"],
  file_path: ["path"],
  filepath: ["path"],
  filename: ["path"],
  dir: ["path"],
  directory: ["path"],
  query: ["pattern", "query"],
  regex: ["pattern", "grep"],
  max_results: ["limit", "max_items"],
  page_size: ["limit", "max_items"],
  lines: ["limit", "max_items"],
  tokens: ["max_tokens"],
  budget: ["max_tokens"],
};

/** What to pass instead of an unknown key, from the keys this schema accepts. */
function insteadOf(key: string, accepted: readonly string[]): string {
  const alternatives = (KEY_ALTERNATIVES[key.toLowerCase()] ?? []).filter((k) =>
    accepted.includes(k),
  );
  if (key.toLowerCase() === "cursor" && alternatives.includes("before"))
    return `"${key}" is not an argument here: pass earlier_cursor as before (older records) or later_cursor as after (newer records)`;
  if (alternatives.length > 0)
    return `"${key}" is not an argument here: pass ${alternatives.map((k) => `"${k}"`).join(" or ")} instead`;
  return `"${key}" is not an argument here`;
}

interface LimitIssue {
  name: string;
  limit: number;
  value: number;
}

/** The limit a too-big or too-small number broke, for the error's `limit` field. */
function limitOf(issue: core.$ZodIssue, where: string): LimitIssue | undefined {
  if (issue.code !== "too_big" && issue.code !== "too_small") return undefined;
  const bound = issue.code === "too_big" ? issue.maximum : issue.minimum;
  const value = (issue as { input?: unknown }).input;
  if (typeof bound !== "number" || typeof value !== "number") return undefined;
  return { name: where, limit: bound, value };
}

export function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.infer<S> {
  const result = schema.safeParse(args ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const accepted = schema instanceof z.ZodObject ? Object.keys((schema as z.ZodObject).shape) : [];
  const problems: string[] = [];
  let limit: LimitIssue | undefined;
  for (const issue of result.error.issues) {
    const where = issue.path.length > 0 ? issue.path.join(".") : "arguments";
    const problem =
      issue.code === "unrecognized_keys"
        ? issue.keys.map((key) => insteadOf(key, accepted)).join("; ")
        : `${where}: ${issue.message}`;
    // zod reports a number past the safe range twice (safe integer, then the bound): say it once.
    if (!problems.includes(problem)) problems.push(problem);
    // The argument's own bound, not zod's safe-integer range check that precedes it.
    if (!limit || (issue as { origin?: string }).origin !== "int")
      limit = limitOf(issue, where) ?? limit;
  }
  const unknownKeys = result.error.issues.some((issue) => issue.code === "unrecognized_keys");
  throw new PagewiseError("INVALID_ARGUMENT", `Invalid arguments: ${problems.join("; ")}.`, {
    ...(limit ? { limit } : {}),
    hint: unknownKeys
      ? `Arguments this tool takes: ${accepted.join(", ")}.`
      : "Fix the named arguments and call again.",
  });
}
