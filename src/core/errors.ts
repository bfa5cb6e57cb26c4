/**
 * @module
 * The one error type of pagewise. Every failure a caller can act on is a `PagewiseError` whose
 * `code` comes from the closed list in the contract; the MCP layer renders it as
 * `{"error":{code,message,…}}` and the CLI maps it to an exit status.
 */

export const ERROR_CODES = [
  "INVALID_ARGUMENT",
  "INVALID_CURSOR",
  "CONTENT_CHANGED",
  "NOT_FOUND",
  "ACCESS_DENIED",
  "NOT_A_FILE",
  "NOT_A_DIRECTORY",
  "NOT_TEXT",
  "BUDGET_TOO_SMALL",
  "RESPONSE_TOO_LARGE",
  "RESOURCE_LIMIT_EXCEEDED",
  "CANCELLED",
  "INTERNAL_ERROR",
  // JSON tools
  "FORMAT_MISMATCH",
  "SYNTAX_ERROR",
  "UNSUPPORTED_SYNTAX",
  "QUERY_SYNTAX_ERROR",
  "UNSUPPORTED_QUERY_FEATURE",
  "HANDLE_EXPIRED",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A limit that was hit: which one, its configured value, and the value that exceeded it. */
export interface LimitInfo {
  name: string;
  limit: number;
  value: number;
}

/** Extra, machine-readable fields of an error; all optional. */
export interface ErrorDetails {
  /** What to try next, in plain words. */
  hint?: string;
  /** Arguments that would work if sent instead (merged over the failed call's arguments). */
  retry?: Record<string, unknown>;
  limit?: LimitInfo;
  /** Where in the source the problem is (byte offset, line, column, …). */
  location?: Record<string, unknown>;
  /** Any other fields, rendered as-is next to `code` and `message`. */
  [key: string]: unknown;
}

export class PagewiseError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PagewiseError";
    this.code = code;
    this.details = details;
  }

  /** The contract's error object: `{"error":{"code","message",…details}}`. */
  toJSON(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } };
  }
}

export function isPagewiseError(value: unknown): value is PagewiseError {
  return value instanceof PagewiseError;
}

/** Wraps anything thrown into a PagewiseError without leaking internals (stack, paths outside roots). */
export function toPagewiseError(value: unknown): PagewiseError {
  if (value instanceof PagewiseError) return value;
  if (value instanceof Error && value.name === "AbortError") {
    return new PagewiseError("CANCELLED", "The request was cancelled before it finished.");
  }
  const message = value instanceof Error ? value.message : String(value);
  return new PagewiseError("INTERNAL_ERROR", `Internal error: ${message}`, {
    hint: "This is a bug in pagewise; retrying the same call may not help.",
  });
}
