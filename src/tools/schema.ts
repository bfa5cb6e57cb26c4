/**
 * @module
 * Argument schemas shared by the tools, and the translation of validation failures into
 * INVALID_ARGUMENT errors that say which argument was wrong and what it takes.
 */
import { z } from "zod";
import { PagewiseError } from "../core/index.js";

/** A whole number ≥ `min`; any size (huge budgets are lowered, not refused). */
export function wholeNumber(min: number, description: string) {
  return z
    .number()
    .refine((n) => Number.isInteger(n), { message: "must be a whole number" })
    .refine((n) => n >= min, { message: `must be at least ${min}` })
    .describe(description);
}

export const maxTokensArg = wholeNumber(
  1,
  "Token budget for the whole response (the serialized page). Larger values are lowered to the server's cap.",
).optional();

export const cursorArg = z
  .string()
  .min(1)
  .describe("Continuation cursor from a previous page's next_cursor; copy it exactly.")
  .optional();

export function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.infer<S> {
  const result = schema.safeParse(args ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "arguments";
    return `${where}: ${issue.message}`;
  });
  throw new PagewiseError("INVALID_ARGUMENT", `Invalid arguments: ${problems.join("; ")}.`, {
    hint: "Fix the named arguments and call again.",
  });
}
