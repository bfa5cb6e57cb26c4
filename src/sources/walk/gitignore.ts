/**
 * @module
 * `.gitignore` files as untrusted content: read without blocking, confined and size-capped, and
 * compiled only when their matching cost is bounded.
 *
 * A `.gitignore` lies in the walked tree, so whoever can write the tree controls it: it may be a
 * symlink to `/dev/zero` or to a file outside the roots, a FIFO, or hundreds of megabytes of rules.
 * The file is opened `O_NOFOLLOW|O_NONBLOCK` (a symlink fails, a FIFO never blocks), checked with
 * fstat on the opened descriptor (regular files only) and read asynchronously up to
 * MAX_GITIGNORE_BYTES. Its rules are compiled by the `ignore` package, whose test costs one regex
 * run per rule: the rules in force for one directory are capped (MAX_GITIGNORE_RULES, and their
 * text, MAX_GITIGNORE_RULE_CHARS), and so is the one rule shape whose regex backtracks
 * polynomially in the path depth (several `**`). A file that breaks a limit is skipped whole, like
 * git skips pattern files over 100 MB, and the walk reports it; applying part of a file would hide
 * or show entries without saying so.
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import ignore from "ignore";
import {
  MAX_GITIGNORE_BYTES,
  MAX_GITIGNORE_GLOBSTARS_PER_RULE,
  MAX_GITIGNORE_RULE_CHARS,
  MAX_GITIGNORE_RULES,
} from "../limits.js";

/** Like git's `core.ignorecase` default: case-insensitive only where file systems usually are. */
const IGNORE_CASE = process.platform === "darwin" || process.platform === "win32";

const OPEN_FLAGS =
  constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Why a `.gitignore` file's rules were not applied, with the limit it broke if any. */
export interface GitignoreSkip {
  readonly reason: string;
  readonly limit?: { readonly name: string; readonly limit: number; readonly value: number };
}

/** A `.gitignore` file's rules, tested one path at a time. */
export interface GitignoreRules {
  readonly count: number;
  /** Characters of its rules. */
  readonly chars: number;
  /**
   * The verdict of the last rule matching `path` alone (a directory's path ends with `/`): `1`
   * ignored, `-1` re-included by a negation, `0` no rule matches. Parent directories are not
   * consulted: the walker never enters an ignored directory, and a directory the caller names is
   * never hidden by the rules that match it or its parents (like rg and fd).
   */
  test(path: string): 1 | -1 | 0;
}

export function isGitignoreSkip(x: unknown): x is GitignoreSkip {
  return typeof x === "object" && x !== null && "reason" in x;
}

/**
 * Reads a `.gitignore` file confined to what the path names: not through a symlink in its last
 * component, a regular file only (checked on the opened descriptor), at most `maxBytes`. Returns
 * undefined when it does not exist.
 */
export async function readGitignore(
  file: string,
  maxBytes: number = MAX_GITIGNORE_BYTES,
): Promise<string | GitignoreSkip | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (code === "ELOOP") return { reason: "a symbolic link (never followed)" };
    return { reason: `unreadable (${code ?? "error"})` };
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return { reason: "not a regular file" };
    if (st.size > maxBytes) return tooLarge(maxBytes, st.size);
    // One byte more than the cap tells a file that grew since fstat.
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let length = 0;
    while (length < buf.length) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return tooLarge(maxBytes, length);
    return buf.toString("utf8", 0, length);
  } catch (err) {
    return { reason: `unreadable (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    await handle.close();
  }
}

function tooLarge(maxBytes: number, value: number): GitignoreSkip {
  return {
    reason: `larger than max_gitignore_bytes (${maxBytes} bytes)`,
    limit: { name: "max_gitignore_bytes", limit: maxBytes, value },
  };
}

/** What may still come into force: rules and their characters. */
export interface RuleBudget {
  readonly rules: number;
  readonly chars: number;
}

export const FULL_RULE_BUDGET: RuleBudget = {
  rules: MAX_GITIGNORE_RULES,
  chars: MAX_GITIGNORE_RULE_CHARS,
};

/** Rules compiled between two turns given to other work: each chunk is a few milliseconds. */
const RULES_PER_CHUNK = 64;

/**
 * Compiles a `.gitignore` text when its rules fit `budget` (what the rules already in force left)
 * and none is too costly; otherwise says why the file is skipped. The rules are compiled in chunks,
 * each regex run once (V8 compiles a regex on its first run), with `pause` between chunks, so a
 * large rule set never blocks the thread in one piece.
 */
export async function compileGitignore(
  text: string,
  budget: RuleBudget = FULL_RULE_BUDGET,
  pause: () => Promise<void> = async () => {},
): Promise<GitignoreRules | GitignoreSkip> {
  const lines = text.split(/\r?\n/);
  let count = 0;
  let chars = 0;
  for (const line of lines) {
    const rule = line.trim();
    if (rule === "" || rule.charCodeAt(0) === 0x23 /* # */) continue;
    count++;
    chars += rule.length;
    const globstars = rule.split("**").length - 1;
    if (globstars > MAX_GITIGNORE_GLOBSTARS_PER_RULE) {
      return {
        reason: `a rule with more than ${MAX_GITIGNORE_GLOBSTARS_PER_RULE} "**" (its match cost grows as depth^${globstars})`,
        limit: {
          name: "max_gitignore_globstars_per_rule",
          limit: MAX_GITIGNORE_GLOBSTARS_PER_RULE,
          value: globstars,
        },
      };
    }
  }
  if (count > budget.rules) {
    return {
      reason: `more rules in force than max_gitignore_rules (${MAX_GITIGNORE_RULES})`,
      limit: { name: "max_gitignore_rules", limit: MAX_GITIGNORE_RULES, value: count },
    };
  }
  if (chars > budget.chars) {
    return {
      reason: `more characters of rules in force than max_gitignore_rule_chars (${MAX_GITIGNORE_RULE_CHARS})`,
      limit: { name: "max_gitignore_rule_chars", limit: MAX_GITIGNORE_RULE_CHARS, value: chars },
    };
  }
  const chunks: RuleList[] = [];
  for (let from = 0; from < lines.length; ) {
    let to = from;
    for (let n = 0; to < lines.length && n < RULES_PER_CHUNK; to++) {
      const rule = lines[to]!.trim();
      if (rule !== "" && rule.charCodeAt(0) !== 0x23) n++;
    }
    const chunk = ruleList(lines.slice(from, to));
    // Compiles the chunk's regexes: a test runs every rule, from the last, until one matches.
    chunk.test("\0", "regex");
    chunks.push(chunk);
    from = to;
    await pause();
  }
  return singlePathMatcher(chunks, count, chars);
}

/** The shape of the `ignore` package's rule list (pinned version), used for single-path tests. */
interface RuleList {
  test(path: string, mode: string): { ignored: boolean; unignored: boolean };
}

/**
 * `ignore`'s public `test()` also tests every parent directory and caches each answer: that would
 * hide a directory the caller names whenever a rule matches it or a parent, and hold one cache
 * entry per path walked. Its rule list tests the one path, as git and rg do during a walk; the
 * package is pinned, and a test checks this shape so an upgrade that changes it fails loudly.
 */
function ruleList(lines: string[]): RuleList {
  const ig = ignore({ allowRelativePaths: true, ignoreCase: IGNORE_CASE }).add(lines);
  const rules = (ig as unknown as { _rules?: RuleList })._rules;
  if (!rules || typeof rules.test !== "function") {
    throw new Error("the ignore package no longer exposes its rule list");
  }
  return rules;
}

/** The last rule matching decides, as in git: chunks are asked from the last, rules likewise. */
function singlePathMatcher(chunks: RuleList[], count: number, chars: number): GitignoreRules {
  return {
    count,
    chars,
    test(path) {
      for (let k = chunks.length - 1; k >= 0; k--) {
        const verdict = chunks[k]!.test(path, "regex");
        if (verdict.ignored) return 1;
        if (verdict.unignored) return -1;
      }
      return 0;
    },
  };
}
