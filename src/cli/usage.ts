/**
 * @module
 * Usage errors (exit status 2), the exit status of each tool error, and the "did you mean" for a
 * misspelt command, flag or value. Loaded by every command, so it imports no module.
 */
import type { ErrorCode } from "../core/index.js";

/** A mistake on the command line: reported in one line with the way to get help, status 2. */
export class UsageError extends Error {}

/** Exit statuses for the CLI, by error code (usage errors are 2, like most tools). */
export function exitStatus(code: ErrorCode): number {
  switch (code) {
    case "INVALID_ARGUMENT":
    case "INVALID_CURSOR":
    case "BUDGET_TOO_SMALL":
    case "QUERY_SYNTAX_ERROR":
      return 2;
    case "NOT_FOUND":
      return 3;
    case "ACCESS_DENIED":
      return 4;
    case "CONTENT_CHANGED":
      return 5;
    case "INTERNAL_ERROR":
      return 70;
    default:
      return 1;
  }
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate `word` most likely meant: the nearest by edits, when it is near enough (a third of
 * its length, at least one edit), or the only candidate that starts with `word`.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3))) return best;
  const prefixed = candidates.filter((c) => lower.length >= 2 && c.startsWith(lower));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
