/**
 * @module
 * The one table of command-line options: every flag of every command, with its help line, default,
 * environment variable and (for terminal commands) the tool argument it sets. Parsing, per-command
 * help, the README's tables and the translation of tool errors into flag names all read it.
 */
import {
  DEFAULT_MAX_READ_TOKENS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOKENS_CAP,
  ESTIMATOR_NAMES,
  MIN_CURSOR_KEY_BYTES,
} from "../core/index.js";
import { DEFAULT_JSON_LIMITS } from "../json/limits.js";
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONCURRENT_SCANS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SCAN_QUEUE_MS,
} from "../mcp/limits.js";
import {
  DEFAULT_JSON_HANDLE_TTL_MS,
  DEFAULT_JSON_MAX_ITEMS,
  DEFAULT_LIST_LIMIT,
  DEFAULT_MAX_CHARS_PER_MATCH,
  DEFAULT_MAX_JSON_HANDLES,
  DEFAULT_MAX_WALK_ENTRIES,
  DEFAULT_SEARCH_LIMIT,
  DEFAULT_SEARCH_STALL_MS,
  MAX_CONTEXT_LINES,
  MAX_JSON_MAX_ITEMS,
  MAX_LIST_LIMIT,
  MAX_SEARCH_LIMIT,
  TAIL_DEFAULT_LIMIT,
  TAIL_DEFAULT_MAX_CHARS_PER_ITEM,
  TAIL_MAX_LIMIT,
} from "../sources/limits.js";
import { JSON_LIMIT_FLAGS } from "./settings.js";

export const TERMINAL_COMMANDS = ["read", "list", "search", "tail", "json"] as const;
export type TerminalCommand = (typeof TERMINAL_COMMANDS)[number];
export type CommandName = "serve" | TerminalCommand;

const ALL: readonly CommandName[] = ["serve", ...TERMINAL_COMMANDS];
const TERMINAL: readonly CommandName[] = TERMINAL_COMMANDS;
/** Commands whose output can be the content itself (`--raw`); all of them can print pages (`--json`). */
export const RAW_COMMANDS: readonly CommandName[] = TERMINAL;

export type Section = "command" | "output" | "budget" | "engine" | "json" | "http" | "general";

export const SECTION_TITLES: Record<Section, string> = {
  command: "Options",
  output: "Output",
  budget: "Confinement, budget and cursors",
  engine: "Engine limits",
  json: "JSON engine limits (RESOURCE_LIMIT_EXCEEDED when hit; docs/json.md)",
  http: "Serving over HTTP (Streamable HTTP at /mcp, stateless; GET /healthz; docs/http.md)",
  general: "General",
};

export interface CliOption {
  readonly flag: string;
  /** Placeholder of the value (`N`, `DIR`); a flag without one is a switch. */
  readonly value?: string;
  readonly multiple?: boolean;
  readonly short?: string;
  readonly help: string;
  /** Shown as "(default …)" in help. */
  readonly defaultText?: string;
  /** Environment variable read when the flag is not given (flags win). */
  readonly env?: string;
  /** The tool argument this flag sets (terminal commands). */
  readonly arg?: string;
  /** For a switch that sets `arg`: the value it sets (default true). */
  readonly sets?: boolean | string;
  /** Parsed and honoured, but left out of help (kept for older scripts). */
  readonly hidden?: boolean;
  /**
   * Bounds of an `N` value, and the values a word may take: the same as the tool's schema (the CLI
   * checks them itself, without loading the schemas; options.test.ts checks that they agree).
   */
  readonly min?: number;
  readonly max?: number;
  readonly choices?: readonly string[];
  readonly commands: readonly CommandName[];
  readonly section: Section;
}

const N = "N";
/**
 * Largest count, offset or length a tool argument takes (tools/schema.ts MAX_COUNT_ARG, which the
 * CLI does not import: it would load zod). options.test.ts checks every bound against the schemas.
 */
const MAX_COUNT = 2 ** 50;

/** What each JSON engine limit bounds (its default comes from src/json/limits.ts). */
const JSON_LIMIT_HELP: Record<string, string> = {
  "json-max-depth": "nesting of objects and arrays",
  "json-max-string-bytes": "bytes of one string or member name",
  "json-max-number-bytes": "bytes of one number as spelled",
  "json-max-record-bytes": "bytes of one JSONL line or JSON-seq record",
  "json-max-object-members": "members of one object",
  "json-max-buffered-matches": "matches held back to return them in document order",
  "json-max-filter-value-bytes": "bytes of one value a filter evaluates",
  "json-max-query-threads": "partial matches alive at once",
  "json-max-regex-states": "size of a compiled match()/search() regex",
  "json-max-regex-input-chars": "characters of one string match()/search() tests",
  "json-max-regex-steps": "work of one match()/search() test: regex states × string length",
  "json-probe-bytes": 'bytes json_open validates with validation "probe"',
};

/** A byte count as help shows it: whole MiB as "16 MiB", anything else as the number. */
function sizeText(value: number): string {
  return value >= 1 << 20 && value % (1 << 20) === 0 ? `${value / (1 << 20)} MiB` : String(value);
}

const ENGINE: CliOption[] = [
  {
    flag: "root",
    value: "DIR",
    multiple: true,
    help: "directory the tools may read (repeatable; relative paths resolve against the first). Roots may also be given as arguments: serve DIR…",
    env: "PAGEWISE_ROOTS",
    commands: ["serve"],
    section: "budget",
  },
  {
    flag: "root",
    value: "DIR",
    multiple: true,
    help: "directory that confines the command (repeatable)",
    defaultText: "the target's own directory, or the current directory without a target",
    commands: TERMINAL,
    section: "budget",
  },
  {
    flag: "estimator",
    value: "NAME",
    help: `token estimator: ${ESTIMATOR_NAMES.join(", ")}`,
    defaultText: "default",
    env: "PAGEWISE_ESTIMATOR",
    commands: ALL,
    section: "budget",
  },
  {
    flag: "default-max-tokens",
    value: N,
    help: "budget of a call that gives none",
    defaultText: String(DEFAULT_MAX_TOKENS),
    env: "PAGEWISE_DEFAULT_MAX_TOKENS",
    commands: ALL,
    section: "budget",
  },
  {
    flag: "max-tokens-cap",
    value: N,
    help: "largest budget honoured; larger requests are lowered",
    defaultText: String(DEFAULT_MAX_TOKENS_CAP),
    env: "PAGEWISE_MAX_TOKENS_CAP",
    commands: ALL,
    section: "budget",
  },
  ...(
    [
      [["serve"], "a random key per process, so cursors die with it"],
      [TERMINAL, "~/.config/pagewise/cursor.key, made on first use"],
    ] as const
  ).map(
    ([commands, defaultText]): CliOption => ({
      flag: "cursor-key-file",
      value: "FILE",
      help: `secret (≥ ${MIN_CURSOR_KEY_BYTES} bytes) that signs cursors; PAGEWISE_CURSOR_KEY holds the secret itself`,
      defaultText,
      env: "PAGEWISE_CURSOR_KEY_FILE",
      commands,
      section: "budget",
    }),
  ),
  {
    flag: "max-read-tokens",
    value: N,
    help: "ceiling of read in line mode (no --max-tokens); above it RESPONSE_TOO_LARGE",
    defaultText: String(DEFAULT_MAX_READ_TOKENS),
    env: "PAGEWISE_MAX_READ_TOKENS",
    commands: ["serve", "read"],
    section: "engine",
  },
  {
    flag: "max-walk-entries",
    value: N,
    help: "directory entries one list/search walk may read",
    defaultText: String(DEFAULT_MAX_WALK_ENTRIES),
    env: "PAGEWISE_MAX_WALK_ENTRIES",
    commands: ["serve", "list", "search"],
    section: "engine",
  },
  {
    flag: "search-stall-ms",
    value: N,
    help: "stop a search whose pattern makes no progress for N ms",
    defaultText: String(DEFAULT_SEARCH_STALL_MS),
    env: "PAGEWISE_SEARCH_STALL_MS",
    commands: ["serve", "search"],
    section: "engine",
  },
  {
    flag: "json-handle-ttl-ms",
    value: N,
    help: "idle time before a json_open handle expires",
    defaultText: String(DEFAULT_JSON_HANDLE_TTL_MS),
    commands: ["serve"],
    section: "json",
  },
  {
    flag: "max-json-handles",
    value: N,
    help: "json_open handles kept per process, least recently used closed",
    defaultText: String(DEFAULT_MAX_JSON_HANDLES),
    commands: ["serve"],
    section: "json",
  },
  ...Object.keys(JSON_LIMIT_FLAGS).map(
    (flag): CliOption => ({
      flag,
      value: N,
      help: JSON_LIMIT_HELP[flag] ?? flag,
      defaultText: sizeText(DEFAULT_JSON_LIMITS[JSON_LIMIT_FLAGS[flag]!]),
      commands: ["serve", "json"],
      section: "json",
    }),
  ),
];

const HTTP: CliOption[] = [
  {
    flag: "http",
    value: "[HOST:]PORT",
    help: `serve over HTTP instead of stdio (HOST default ${DEFAULT_HTTP_HOST}; port 0 picks a free port, logged in the 'listening' line)`,
  },
  {
    flag: "auth-file",
    value: "FILE",
    help: 'identities {"identities":[{"name","token_sha256","roots":[DIR…]}]}; requests need Authorization: Bearer TOKEN; re-read on change. Without it only loopback can be bound and every caller is "anonymous" (--root)',
  },
  {
    flag: "allowed-host",
    value: "NAME",
    multiple: true,
    help: "also accept this name in Host/Origin (repeatable; e.g. the proxy's)",
  },
  {
    flag: "public-url",
    value: "URL",
    help: "public base URL, for the OAuth resource metadata behind a proxy",
  },
  {
    flag: "max-concurrent-scans",
    value: N,
    help: "tool calls run at once per process",
    defaultText: String(DEFAULT_MAX_CONCURRENT_SCANS),
  },
  {
    flag: "scan-queue-ms",
    value: N,
    help: "wait for a free slot up to N ms, then RESOURCE_LIMIT_EXCEEDED",
    defaultText: String(DEFAULT_SCAN_QUEUE_MS),
  },
  {
    flag: "max-body-bytes",
    value: N,
    help: "largest request body; larger is HTTP 413",
    defaultText: String(DEFAULT_MAX_BODY_BYTES),
  },
  {
    flag: "request-timeout-ms",
    value: N,
    help: "stop a request after N ms with RESOURCE_LIMIT_EXCEEDED",
    defaultText: String(DEFAULT_REQUEST_TIMEOUT_MS),
  },
].map((o) => ({ ...o, commands: ["serve"] as const, section: "http" as const }));

const cmd = (commands: CommandName[], option: Omit<CliOption, "commands" | "section">) => ({
  ...option,
  commands,
  section: "command" as const,
});

/** Flags that set tool arguments; `arg` names the argument in the tool's schema. */
const TOOL_ARGS: CliOption[] = [
  cmd(["read", "list", "search", "tail", "json"], {
    flag: "max-tokens",
    value: N,
    arg: "max_tokens",
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    help: "token budget of the page",
  }),
  cmd(["read", "list", "search", "tail", "json"], {
    flag: "cursor",
    value: "C",
    arg: "cursor",
    help: "continue from a previous page (its next_cursor)",
  }),
  cmd(["read"], {
    flag: "offset",
    value: N,
    arg: "offset",
    min: 0,
    max: MAX_COUNT,
    help: "first line, 0-based",
  }),
  cmd(["read"], {
    flag: "limit",
    value: N,
    arg: "limit",
    min: 0,
    max: MAX_COUNT,
    help: "number of lines (default: to the end)",
  }),
  cmd(["read"], {
    flag: "encoding",
    value: "ENC",
    arg: "encoding",
    choices: ["utf-8", "base64"],
    help: "base64: raw bytes of a file that is not UTF-8 (page mode)",
    defaultText: "utf-8",
  }),
  cmd(["list"], {
    flag: "recursive",
    short: "r",
    arg: "recursive",
    help: "list the whole tree below DIR",
  }),
  cmd(["list", "search"], {
    flag: "glob",
    value: "G",
    arg: "glob",
    help: 'only names matching G ("*.ts" at any depth; "src/**" by path)',
  }),
  cmd(["list"], {
    flag: "type",
    value: "T",
    arg: "type",
    choices: ["file", "directory", "any"],
    help: "file, directory or any",
    defaultText: "any",
  }),
  cmd(["list", "search"], {
    flag: "include-hidden",
    arg: "include_hidden",
    help: "include names starting with '.' too",
  }),
  cmd(["list", "search"], {
    flag: "no-respect-gitignore",
    arg: "respect_gitignore",
    sets: false,
    help: "include what .gitignore files ignore",
  }),
  cmd(["list", "search"], {
    flag: "respect-gitignore",
    arg: "respect_gitignore",
    hidden: true,
    help: "leave out what .gitignore files ignore (the default)",
  }),
  ...(
    [
      ["list", "entries", DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT],
      ["search", "matches", DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT],
    ] as const
  ).flatMap(([command, unit, defaultLimit, maxLimit]) => {
    return [
      cmd([command], {
        flag: "limit",
        value: N,
        arg: "limit",
        min: 1,
        max: MAX_COUNT,
        help: `${unit} per page, at most ${maxLimit}`,
        defaultText: String(defaultLimit),
      }),
      cmd([command], {
        flag: "offset",
        value: N,
        arg: "offset",
        min: 0,
        max: MAX_COUNT,
        help: `${unit} to skip`,
        defaultText: "0",
      }),
    ];
  }),
  cmd(["search"], {
    flag: "literal",
    short: "F",
    arg: "literal",
    help: "PATTERN is plain text, not a regex",
  }),
  cmd(["search"], {
    flag: "case-sensitive",
    short: "s",
    arg: "case_sensitive",
    help: "match case exactly (default: smart case)",
  }),
  cmd(["search"], {
    flag: "ignore-case",
    short: "i",
    arg: "case_sensitive",
    sets: false,
    help: "ignore case",
  }),
  cmd(["search"], {
    flag: "no-case-sensitive",
    arg: "case_sensitive",
    sets: false,
    hidden: true,
    help: "ignore case",
  }),
  cmd(["search"], {
    flag: "context",
    short: "C",
    value: N,
    arg: "context",
    min: 0,
    max: MAX_CONTEXT_LINES,
    help: `lines of context before and after each match, 0-${MAX_CONTEXT_LINES}`,
    defaultText: "0",
  }),
  cmd(["search"], {
    flag: "max-chars-per-match",
    value: N,
    arg: "max_chars_per_match",
    min: 1,
    max: MAX_COUNT,
    help: "clamp longer match lines around the match",
    defaultText: String(DEFAULT_MAX_CHARS_PER_MATCH),
  }),
  cmd(["search"], {
    flag: "count",
    value: "MODE",
    arg: "count",
    choices: ["exact", "at_least", "none"],
    help: "exact (every file read for the total), at_least (a lower bound, sooner) or none",
    defaultText: "exact",
  }),
  cmd(["tail"], {
    flag: "before",
    value: "C",
    arg: "before",
    help: "records before a previous page (its earlier_cursor)",
  }),
  cmd(["tail"], {
    flag: "after",
    value: "C",
    arg: "after",
    help: "records after a previous page (its later_cursor), appended ones included",
  }),
  cmd(["tail"], {
    flag: "from-start",
    arg: "from_start",
    help: "begin at the first record instead of the newest",
  }),
  cmd(["tail"], {
    flag: "grep",
    value: "P",
    arg: "grep",
    help: "only records matching the regular expression P (smart case)",
  }),
  cmd(["tail"], {
    flag: "grep-literal",
    arg: "grep_literal",
    help: "--grep is plain text, not a regular expression",
  }),
  cmd(["tail"], {
    flag: "limit",
    value: N,
    arg: "limit",
    min: 1,
    max: MAX_COUNT,
    help: `most records per page, at most ${TAIL_MAX_LIMIT}`,
    defaultText: String(TAIL_DEFAULT_LIMIT),
  }),
  cmd(["tail"], {
    flag: "max-chars-per-item",
    value: N,
    arg: "max_chars_per_item",
    min: 1,
    max: MAX_COUNT,
    help: "clamp longer records (read the rest through line_cursor)",
    defaultText: String(TAIL_DEFAULT_MAX_CHARS_PER_ITEM),
  }),
  cmd(["json"], {
    flag: "pointer",
    arg: "language",
    sets: "pointer",
    help: 'QUERY is a JSON Pointer ("/orders/0/id"), not JSONPath',
  }),
  cmd(["json"], {
    flag: "format",
    value: "F",
    arg: "format",
    choices: ["auto", "json", "jsonl", "json-seq"],
    help: "auto, json, jsonl or json-seq",
    defaultText: "auto",
  }),
  cmd(["json"], {
    flag: "max-items",
    value: N,
    arg: "max_items",
    min: 1,
    max: MAX_COUNT,
    help: `matches per page, at most ${MAX_JSON_MAX_ITEMS}`,
    defaultText: String(DEFAULT_JSON_MAX_ITEMS),
  }),
];

const OUTPUT: CliOption[] = [
  {
    flag: "raw",
    help: "print one page's content itself (lines, paths, matches, values); the command for the next page goes to stderr",
    defaultText: "on a terminal",
    commands: RAW_COMMANDS,
    section: "output",
  },
  {
    flag: "json",
    help: "print one page as the tool's JSON object (its next_cursor continues)",
    commands: RAW_COMMANDS,
    section: "output",
  },
];

const GENERAL: CliOption[] = [
  { flag: "help", short: "h", help: "this help", commands: ALL, section: "general" },
  {
    flag: "version",
    short: "V",
    help: "print the version",
    commands: ALL,
    section: "general",
  },
];

/** Every option of every command. */
export const OPTIONS: readonly CliOption[] = [
  ...TOOL_ARGS,
  ...OUTPUT,
  ...ENGINE,
  ...HTTP,
  ...GENERAL,
];

export function optionsOf(command: CommandName): CliOption[] {
  return OPTIONS.filter((o) => o.commands.includes(command));
}

type ParseConfig = Record<
  string,
  { type: "string" | "boolean"; multiple?: boolean; short?: string }
>;

/** The `node:util` parseArgs configuration of a command. */
export function parseConfigOf(command: CommandName): ParseConfig {
  const config: ParseConfig = {};
  for (const o of optionsOf(command)) {
    config[o.flag] = {
      type: o.value === undefined ? "boolean" : "string",
      ...(o.multiple ? { multiple: true } : {}),
      ...(o.short ? { short: o.short } : {}),
    };
  }
  return config;
}

/** A command's usage line, summary and positional arguments. */
export interface CommandInfo {
  readonly usage: string;
  readonly summary: string;
  readonly about: string;
  /** Tool argument each positional fills, in order. */
  readonly positionals: readonly string[];
  readonly tool?: string;
}

export const COMMANDS: Record<CommandName, CommandInfo> = {
  serve: {
    usage: "pagewise serve [--root] DIR… [options]",
    summary: "serve the MCP tools over stdio (or --http [HOST:]PORT)",
    about: `Serves the MCP tools over stdio: JSON-RPC on stdout, logs on stderr. Roots come from --root,
from arguments, or from PAGEWISE_ROOTS (separated by "${process.platform === "win32" ? ";" : ":"}"); flags win over the environment.
Without a cursor key, cursors are signed with a random key and die with the process.`,
    positionals: [],
  },
  read: {
    usage: "pagewise read FILE [options]",
    summary: "print a file, or one page of it that fits --max-tokens",
    about: `Without --max-tokens and --cursor, prints FILE's lines (--offset, --limit) as text: into a
pipe all of the file (like cat), on a terminal the whole file or, over --max-read-tokens, its first
page. With --max-tokens, prints one page that fits the budget; the command for the next page goes
to stderr (--raw) or is in the page's next_cursor (--json). Pages concatenate to the file exactly.`,
    positionals: ["path"],
    tool: "read",
  },
  list: {
    usage: "pagewise list [DIR] [options]",
    summary: "list a directory (--recursive) in pages",
    about: "Lists DIR (default: the current directory) in code-point order, .gitignore respected.",
    positionals: ["path"],
    tool: "list",
  },
  search: {
    usage: "pagewise search PATTERN [DIR|FILE] [options]",
    summary: "search file contents for a regex or text",
    about: `Searches the text files under DIR (default: the current directory), or one FILE, for PATTERN
(a JavaScript regex; -F for text), smart case. Prints each matching line once as
PATH:LINE:COLUMN:TEXT (all of them into a pipe, like rg --column), or a page with the exact
total (--json).`,
    positionals: ["pattern", "path"],
    tool: "search",
  },
  tail: {
    usage: "pagewise tail FILE [options]",
    summary: "the newest records of a log or JSONL file",
    about: `Prints the newest records (lines) of FILE that fit the budget, oldest first. The commands for
earlier records (--before) and for records appended later (--after) go to stderr (--raw) or are the
page's earlier_cursor and later_cursor (--json). See docs/tail.md.`,
    positionals: ["path"],
    tool: "tail",
  },
  json: {
    usage: "pagewise json FILE QUERY [options]",
    summary: "JSONPath (or --pointer) matches in a JSON, JSONL or JSON-seq file",
    about: `Runs a JSONPath (RFC 9535) query, or with --pointer a JSON Pointer (RFC 6901), over FILE,
streaming. Into a pipe it prints every match's value, one per line, exactly as spelled in the file
(like jq -c); on a terminal one page, each match pretty after its path; --json one page
{language, query, items:[{path, value}], complete, next_cursor, stats}. See docs/json.md.`,
    positionals: ["path", "query"],
    tool: "json_read",
  },
};

/** Exit statuses, documented in `--help` and the README. */
export const EXIT_STATUSES: readonly [number, string][] = [
  [0, "success"],
  [1, "the tool refused (NOT_TEXT, RESOURCE_LIMIT_EXCEEDED, NOT_A_FILE, …)"],
  [2, "usage error: a bad flag or value, INVALID_ARGUMENT, INVALID_CURSOR, BUDGET_TOO_SMALL…"],
  [3, "NOT_FOUND"],
  [4, "ACCESS_DENIED: the target is outside --root"],
  [5, "CONTENT_CHANGED: the file changed since the cursor was made; start again"],
  [70, "internal error (a bug: please report it)"],
];

const HELP_WIDTH = 100;
const HELP_INDENT = 28;

/** `text` wrapped to the help width, continuation lines indented to the help column. */
function wrap(text: string, firstWidth: number): string {
  const lines: string[] = [];
  let line = "";
  let width = firstWidth;
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
      width = HELP_WIDTH - HELP_INDENT;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(HELP_INDENT)}`);
}

function optionLine(o: CliOption): string {
  const names = `${o.short ? `-${o.short}, ` : ""}--${o.flag}${o.value ? ` ${o.value}` : ""}`;
  const extras = [
    o.defaultText !== undefined ? `default: ${o.defaultText}` : undefined,
    o.env !== undefined ? `env ${o.env}` : undefined,
  ].filter((x) => x !== undefined);
  const text = `${o.help}${extras.length > 0 ? ` (${extras.join("; ")})` : ""}`;
  const head = `  ${names}`;
  return head.length < HELP_INDENT
    ? `${head.padEnd(HELP_INDENT)}${wrap(text, HELP_WIDTH - HELP_INDENT)}`
    : `${head}\n${" ".repeat(HELP_INDENT)}${wrap(text, HELP_WIDTH - HELP_INDENT)}`;
}

/** `pagewise COMMAND --help`: that command's options only, grouped. */
export function commandHelp(command: CommandName): string {
  const info = COMMANDS[command];
  const parts = [`Usage: ${info.usage}`, "", info.about];
  for (const section of Object.keys(SECTION_TITLES) as Section[]) {
    const lines = optionsOf(command)
      .filter((o) => o.section === section && !o.hidden)
      .map(optionLine);
    if (lines.length > 0) parts.push("", `${SECTION_TITLES[section]}:`, ...lines);
  }
  if (command !== "serve") {
    parts.push(
      "",
      "Exit status: 0 ok, 1 refused, 2 usage, 3 not found, 4 access denied, 5 content changed, 70 bug.",
    );
  }
  return parts.join("\n");
}

/** `pagewise --help`. */
export function mainHelp(version: string): string {
  const commands = (Object.keys(COMMANDS) as CommandName[]).map(
    (c) => `  ${COMMANDS[c].usage.padEnd(46)}${COMMANDS[c].summary}`,
  );
  const env = [
    ...new Map(
      OPTIONS.filter((o) => o.env !== undefined).map((o) => [
        o.env!,
        `--${o.flag}${o.commands.length === 1 ? ` (${o.commands[0]} only)` : ""}`,
      ]),
    ),
  ].map(([name, flag]) => `  ${name.padEnd(30)}${flag}`);
  return [
    `pagewise ${version}: read content of any size in pages that fit a token budget.`,
    "",
    "Usage:",
    ...commands,
    `  ${"pagewise help [COMMAND]".padEnd(46)}this help, or a command's options`,
    `  ${"pagewise -V, --version".padEnd(46)}print the version`,
    "",
    "Terminal commands read any path you name: without --root they are confined to the target's own",
    "directory. On a terminal they print one page of the content itself (--raw) and the command for",
    "the next page on stderr. Into a pipe, read, list, search and json print all of it (like cat, find,",
    "rg and jq -c), tail its newest page. --json prints one page as the tool's JSON object.",
    "",
    "Environment (flags win over it):",
    ...env,
    `  ${"PAGEWISE_CURSOR_KEY".padEnd(30)}the cursor key itself (≥ ${MIN_CURSOR_KEY_BYTES} bytes)`,
    "",
    "Exit status:",
    ...EXIT_STATUSES.map(([code, meaning]) => `  ${String(code).padEnd(4)}${meaning}`),
    "",
    'Run "pagewise COMMAND --help" for a command\'s options.',
  ].join("\n");
}
