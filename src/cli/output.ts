/**
 * @module
 * How terminal commands speak: the command line for the next page or a retry, paths as the user
 * spelled them, and tool errors in flags (`--max-tokens`, `-F`) rather than tool arguments
 * (`max_tokens`, `literal: true`). What a page prints is render.ts.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { COMMANDS, OPTIONS, type TerminalCommand } from "./options.js";

/** A word safe to paste into a POSIX shell: as is when plain, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** How the user ran the command, enough to spell another run of it. */
export interface Invocation {
  readonly command: TerminalCommand;
  readonly args: Readonly<Record<string, unknown>>;
  /** Roots to repeat in a follow-up command (the confinement the cursor was made under). */
  readonly rootDirs: readonly string[];
  /** Output flags to repeat (`--raw` when it was asked for explicitly). */
  readonly outputFlags: readonly string[];
  /** Show paths absolute (the user named the target by an absolute path), else from the cwd. */
  readonly absolutePaths: boolean;
}

/** The command line that runs `inv.command` with `args` (a continuation or a retry). */
export function commandLine(inv: Invocation, args: Record<string, unknown>): string {
  const words = ["pagewise", inv.command];
  const slots = COMMANDS[inv.command].positionals;
  const continuing =
    args.cursor !== undefined || args.before !== undefined || args.after !== undefined;
  for (const slot of slots) {
    if (continuing) break; // a cursor already names the target and the query
    const value = args[slot];
    if (value !== undefined) words.push(shellQuote(String(value)));
  }
  for (const [arg, value] of Object.entries(args)) {
    if (value === undefined || slots.includes(arg)) continue;
    if (continuing && arg === "language") continue;
    const option = OPTIONS.find(
      (o) =>
        o.arg === arg &&
        o.commands.includes(inv.command) &&
        !o.hidden &&
        (o.sets === undefined ? o.value !== undefined || value === true : o.sets === value),
    );
    if (!option) continue;
    words.push(`--${option.flag}`);
    if (option.value !== undefined) words.push(shellQuote(String(value)));
  }
  for (const dir of inv.rootDirs) words.push("--root", shellQuote(dir));
  words.push(...inv.outputFlags);
  return words.join(" ");
}

const POSITIONAL_NAMES: Record<string, string> = {
  path: "the target",
  pattern: "PATTERN",
  query: "QUERY",
};

/** The flag that sets tool argument `arg` in `command`, spelled for a message. */
function flagOf(command: TerminalCommand, arg: string): string | undefined {
  if (COMMANDS[command].positionals.includes(arg)) return POSITIONAL_NAMES[arg];
  const candidates = OPTIONS.filter((o) => o.arg === arg && o.commands.includes(command));
  // The flag that takes the argument's value, visible if possible (`--respect-gitignore` is hidden
  // behind `--no-respect-gitignore` but still a real flag).
  const option =
    candidates.find((o) => o.sets === undefined && !o.hidden) ??
    candidates.find((o) => o.sets === undefined) ??
    candidates[0];
  return option ? `--${option.flag}` : undefined;
}

const TOOL_NAMES: Record<string, string> = {
  read: "pagewise read",
  list: "pagewise list",
  search: "pagewise search",
  tail: "pagewise tail",
  json_read: "pagewise json",
};

/**
 * A tool message in CLI terms: argument names (`max_tokens`, and any argument a validation message
 * names before its colon) become flags, "the read tool" becomes `pagewise read`. Output fields such
 * as `next_cursor` stay, since they are what the JSON page shows.
 */
export function translateMessage(command: TerminalCommand, message: string): string {
  let text = message.replace(/(Invalid arguments: |; )([a-z_]+)(?=:)/g, (whole, lead, arg) => {
    const flag = flagOf(command, arg);
    return flag ? `${lead}${flag}` : whole;
  });
  // A switch set to true is the flag alone, in its short spelling when it has one: `literal: true`
  // is `-F`, `--grep-literal: true` (an argument already named as its flag) is `--grep-literal`.
  text = text.replace(/(--)?\b([a-z]+(?:[_-][a-z]+)*): true\b/g, (whole, dashes, name: string) => {
    const option = OPTIONS.find(
      (o) =>
        o.commands.includes(command) &&
        o.value === undefined &&
        o.sets === undefined &&
        (dashes ? o.flag === name : o.arg === name),
    );
    return option ? (option.short ? `-${option.short}` : `--${option.flag}`) : whole;
  });
  text = text.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (word) => {
    const flag = flagOf(command, word);
    return flag?.startsWith("--") ? flag : word;
  });
  // A positional named at the start of a message (`pattern is not a valid …`) as usage spells it.
  text = text.replace(/^([a-z]+) (?=is |must )/, (whole, arg: string) => {
    const flag = flagOf(command, arg);
    return flag ? `${flag} ` : whole;
  });
  return text
    .replace(
      /\bthe (read|list|search|tail|json_read) tool\b/g,
      (_w, tool: string) => `${TOOL_NAMES[tool]}`,
    )
    .replace("the directories this server may read", "the --root directories")
    .replace("relative to the server's root", "relative to --root")
    .replace("with offset/limit", "with --offset/--limit");
}

interface ErrorBody {
  code: string;
  message: string;
  hint?: string;
  retry?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A tool error as the user sees it: translated, with the retry as a command line. */
export function renderError(inv: Invocation, body: ErrorBody, asJson: boolean): string {
  const limitOf = body.limit as { name?: string; limit?: number; value?: number } | undefined;
  const translated: ErrorBody = {
    ...body,
    message: translateMessage(inv.command, body.message),
    ...(body.hint !== undefined ? { hint: translateMessage(inv.command, body.hint) } : {}),
    // A limit named after an argument is named after its flag, like the message.
    ...(limitOf?.name !== undefined
      ? { limit: { ...limitOf, name: flagOf(inv.command, limitOf.name) ?? limitOf.name } }
      : {}),
  };
  let retry: string | undefined;
  if (body.retry !== undefined) {
    const merged: Record<string, unknown> = { ...inv.args };
    for (const [k, v] of Object.entries(body.retry)) merged[k] = v ?? undefined;
    retry = commandLine(inv, merged);
  }
  if (body.code === "ACCESS_DENIED") {
    translated.hint = `${translated.hint ? `${translated.hint} ` : ""}Give --root DIR to allow a directory, or leave --root out to read the target where it is.`;
  }
  if (asJson)
    return `${JSON.stringify({ error: { ...translated, ...(retry ? { retry_command: retry } : {}) } })}\n`;
  const lines = [`pagewise: ${translated.code}: ${translated.message}`];
  if (translated.hint) lines.push(`  hint: ${translated.hint}`);
  if (retry) lines.push(`  retry: ${retry}`);
  const limit = translated.limit as { name?: string; limit?: number; value?: number } | undefined;
  if (limit?.name) lines.push(`  limit: ${limit.name} = ${limit.limit} (got ${limit.value})`);
  return `${lines.join("\n")}\n`;
}

/** Where a hit lives, spelled as the user spelled the target: absolute, or from the cwd. */
export function displayPath(baseUri: string, relative: string, cwd: string | undefined): string {
  let base: string;
  try {
    base = fileURLToPath(baseUri);
  } catch {
    return relative;
  }
  const absolute = path.join(base, relative);
  if (cwd === undefined) return absolute;
  const fromCwd = path.relative(cwd, absolute);
  return fromCwd === "" || fromCwd.startsWith("..") || path.isAbsolute(fromCwd)
    ? absolute
    : fromCwd;
}

/** Arguments that shape every page and that a cursor does not carry, so the next command repeats them. */
const PAGE_SHAPE: Record<TerminalCommand, readonly string[]> = {
  read: ["max_tokens"], // read's limit is a line range, fixed by the cursor
  list: ["max_tokens", "limit"],
  search: ["max_tokens", "limit", "max_chars_per_match"],
  tail: ["max_tokens", "limit", "max_chars_per_item"],
  json: ["max_tokens", "max_items"],
};

/** The arguments of the command for the next page: its cursor and this page's shape. */
export function nextArgs(
  inv: Invocation,
  cursor: Record<string, unknown>,
): Record<string, unknown> {
  const args: Record<string, unknown> = { ...cursor };
  for (const name of PAGE_SHAPE[inv.command]) args[name] = inv.args[name];
  return args;
}
