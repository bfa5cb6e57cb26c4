/**
 * @module
 * Argument schemas shared by the tools, and the translation of validation failures into
 * INVALID_ARGUMENT errors that say which argument was wrong, which limit it broke and what to pass
 * instead. The published JSON Schemas carry the same bounds validation enforces.
 */
import { type core, z } from "zod";
import { type ErrorCode, PagewiseError } from "../core/index.js";

/**
 * Largest count, offset or character length an argument accepts (2^50). Far beyond any real file,
 * and small enough that the sum of two such values is still an exact integer (2^51 < 2^53) and fits
 * a cursor's integer fields.
 */
export const MAX_COUNT_ARG = 2 ** 50;
/** Largest `max_tokens` accepted; anything above the server's cap is lowered to it and reported. */
export const MAX_TOKENS_ARG = Number.MAX_SAFE_INTEGER;

/**
 * What each error code asks the agent to do, said once in the server's instructions. Typed by the
 * closed list of codes, so a new code cannot be left out.
 */
export const ERROR_ACTIONS: Readonly<Record<ErrorCode, string>> = {
  INVALID_ARGUMENT: "fix the argument it names",
  INVALID_CURSOR: "start again without the cursor",
  CONTENT_CHANGED: "the content changed: start again without the cursor",
  NOT_FOUND: "fix the path (list shows what exists)",
  ACCESS_DENIED: "use a path inside the roots it names",
  NOT_A_FILE: "use list or search for a directory",
  NOT_A_DIRECTORY: "use read for a file",
  NOT_TEXT: 'read with encoding "base64"',
  BUDGET_TOO_SMALL: "raise max_tokens to the minimum it names",
  RESPONSE_TOO_LARGE: "page with max_tokens",
  RESOURCE_LIMIT_EXCEEDED: "narrow the call (limit names what was exceeded) or call again later",
  CANCELLED: "call again",
  INTERNAL_ERROR: "a defect: report it",
  FORMAT_MISMATCH: "call again with the format in retry",
  SYNTAX_ERROR: "the file is not strict JSON at location",
  UNSUPPORTED_SYNTAX: "the file is not strict JSON at location (comments: JSONC)",
  QUERY_SYNTAX_ERROR: "fix the query at location",
  UNSUPPORTED_QUERY_FEATURE: "simplify the query",
  HANDLE_EXPIRED: "json_open again, or pass path instead of file_id",
};

/**
 * What every tool shares, said once (the server's instructions) instead of in each description:
 * the budget, the one paging rule, paths, the error shape and what each code asks for.
 */
export function COMMON_RULES(defaultMaxTokens: number, maxTokensCap: number): string {
  const actions = Object.entries(ERROR_ACTIONS)
    .map(([code, action]) => `${code}: ${action}.`)
    .join(" ");
  return `pagewise reads files, directories, search results, logs and large JSON in pages that fit a token budget. Every tool takes max_tokens: ${defaultMaxTokens} when left out, at most ${maxTokensCap} (a larger one is lowered and the page says so); ask for less if your client's limit is lower. Paging: every page of read, list, search, tail and json_read has next_cursor; pass it back as cursor, alone, until it is null. A cursor is bound to the content's version. Paths: relative to the first root, absolute inside a root, or file:// URIs. Errors are {"error":{"code","message","hint?","retry?","limit?"}}: follow the message; retry holds arguments that would work. ${actions}`;
}

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
  "Token budget of the response.",
).optional();

export const cursorArg = z.string().min(1).describe("next_cursor of a previous page.").optional();

/**
 * Keys agents send by habit, and what to pass instead (the first alternative the schema has wins).
 * A Map, not an object literal: a key such as "constructor" or "__proto__" must find nothing.
 */
const KEY_ALTERNATIVES: ReadonlyMap<string, readonly string[]> = new Map([
  ["cursor", ["file_id"]],
  ["next_cursor", ["cursor"]],
  ["before", ["cursor"]],
  ["after", ["cursor"]],
  ["file", ["path"]],
  ["file_path", ["path"]],
  ["filepath", ["path"]],
  ["filename", ["path"]],
  ["dir", ["path"]],
  ["directory", ["path"]],
  ["query", ["pattern", "query"]],
  ["regex", ["pattern", "grep"]],
  ["max_results", ["limit", "max_items"]],
  ["page_size", ["limit", "max_items"]],
  ["lines", ["limit", "max_items"]],
  ["tokens", ["max_tokens"]],
  ["budget", ["max_tokens"]],
]);

/** What to pass instead of an unknown key, from the keys this schema accepts. */
function insteadOf(key: string, accepted: readonly string[]): string {
  const alternatives = (KEY_ALTERNATIVES.get(key.toLowerCase()) ?? []).filter((k) =>
    accepted.includes(k),
  );
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
