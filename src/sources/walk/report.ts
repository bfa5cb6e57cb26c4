/**
 * @module
 * What a walk left out, as page fields: `filtered` (entries removed by ignore or hidden-file rules,
 * and the argument that includes them) and `skipped` (directories that could not be read,
 * `.gitignore` files whose rules were not applied). An agent must never read a silent `0` as
 * "not there", so a page says whenever rules removed something.
 */
import type { WalkStats } from "./walk.js";

export interface FilteredField {
  /** Entries removed by `.gitignore` rules (an ignored directory counts once). */
  readonly ignored?: number;
  /** Entries removed because their name starts with "." (a hidden directory counts once). */
  readonly hidden?: number;
  /** The arguments that include them. */
  readonly hint: string;
}

/** The `filtered` field, or undefined when the rules removed nothing. */
export function filteredField(
  stats: Pick<WalkStats, "ignored" | "hidden">,
): FilteredField | undefined {
  const args: string[] = [];
  if (stats.ignored > 0) args.push("respect_gitignore: false");
  if (stats.hidden > 0) args.push("include_hidden: true");
  if (args.length === 0) return undefined;
  return {
    ...(stats.ignored > 0 ? { ignored: stats.ignored } : {}),
    ...(stats.hidden > 0 ? { hidden: stats.hidden } : {}),
    hint: `${args.join(" / ")} ${args.length > 1 ? "include" : "includes"} them.`,
  };
}

/** The `skipped` field of a listing, or undefined when nothing was skipped. */
export function skippedField(
  stats: Pick<
    WalkStats,
    "unreadable" | "firstUnreadable" | "gitignoreSkipped" | "firstGitignoreSkipped"
  >,
): Record<string, unknown> | undefined {
  if (stats.unreadable === 0 && stats.gitignoreSkipped === 0) return undefined;
  return {
    ...(stats.unreadable > 0
      ? { unreadable_directories: stats.unreadable, first: stats.firstUnreadable }
      : {}),
    ...(stats.gitignoreSkipped > 0
      ? { gitignore_files: stats.gitignoreSkipped, first_gitignore: stats.firstGitignoreSkipped }
      : {}),
  };
}

/** The fields above as JSON members to append to a page object (`,"filtered":…`), or "". */
export function walkReportMembers(stats: WalkStats): string {
  const filtered = filteredField(stats);
  const skipped = skippedField(stats);
  return (
    (filtered ? `,"filtered":${JSON.stringify(filtered)}` : "") +
    (skipped ? `,"skipped":${JSON.stringify(skipped)}` : "")
  );
}
