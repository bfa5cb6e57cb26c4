/**
 * @module
 * The `pagewise` command: `serve` (MCP over stdio or HTTP) and the tools as terminal commands that
 * print the content itself or the same JSON pages. Every flag comes from the table in options.ts.
 */
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Roots } from "../access/index.js";
import {
  CursorCodec,
  createEstimator,
  type ErrorCode,
  ESTIMATOR_NAMES,
  PagewiseError,
  toPagewiseError,
} from "../core/index.js";
import { createEngine, createMcpServer } from "../mcp/server.js";
import {
  parseArgs as parseToolArgs,
  TOOLS,
  type ToolContext,
  type ToolDefinition,
} from "../tools/index.js";
import { PACKAGE_VERSION } from "../version.js";
import {
  COMMANDS,
  type CommandName,
  commandHelp,
  mainHelp,
  optionsOf,
  parseConfigOf,
  RAW_COMMANDS,
  TERMINAL_COMMANDS,
  type TerminalCommand,
} from "./options.js";
import { type Invocation, type RawOutput, renderError, renderRaw } from "./output.js";
import { progressLine } from "./progress.js";
import {
  httpSettingsFrom,
  loadCursorKey,
  rootsFrom,
  settingsFrom,
  UsageError,
} from "./settings.js";

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

const isCommand = (name: string | undefined): name is CommandName =>
  name !== undefined && Object.hasOwn(COMMANDS, name);

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "serve") return await serve(rest);
    if ((TERMINAL_COMMANDS as readonly string[]).includes(command ?? "")) {
      return await runTerminal(command as TerminalCommand, rest);
    }
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h": {
        const topic = rest[0];
        if (topic !== undefined && !isCommand(topic))
          throw new UsageError(`unknown command "${topic}"`);
        process.stdout.write(`${topic ? commandHelp(topic) : mainHelp(PACKAGE_VERSION)}\n`);
        return 0;
      }
      case "version":
      case "--version":
      case "-V":
      case "-v":
        process.stdout.write(`${PACKAGE_VERSION}\n`);
        return 0;
      default:
        throw new UsageError(
          `unknown command "${command}"; the commands are ${Object.keys(COMMANDS).join(", ")}`,
        );
    }
  } catch (err) {
    const about = isCommand(command) ? `pagewise ${command} --help` : "pagewise --help";
    if (
      err instanceof UsageError ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      process.stderr.write(`pagewise: ${(err as Error).message}\nRun "${about}" for usage.\n`);
      return 2;
    }
    if (err instanceof PagewiseError) {
      process.stderr.write(`pagewise: ${err.code}: ${err.message}\n`);
      return exitStatus(err.code);
    }
    throw err;
  }
}

/**
 * Flags not given on the command line, taken from their environment variables (flags win). Values
 * are checked here so that a bad one is reported under the variable's name.
 */
export function withEnvironment(
  command: CommandName,
  values: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, unknown> {
  const merged = { ...values };
  for (const option of optionsOf(command)) {
    const raw = option.env === undefined ? undefined : env[option.env];
    // Roots combine flags and arguments, so serveRoots reads PAGEWISE_ROOTS itself.
    if (raw === undefined || raw === "" || option.multiple || merged[option.flag] !== undefined)
      continue;
    if (option.value === "N" && !/^[1-9]\d*$/.test(raw.trim()))
      throw new UsageError(`${option.env} takes a whole number ≥ 1 (got "${raw}")`);
    if (option.flag === "estimator" && !(ESTIMATOR_NAMES as readonly string[]).includes(raw))
      throw new UsageError(
        `${option.env} takes one of ${ESTIMATOR_NAMES.join(", ")} (got "${raw}")`,
      );
    merged[option.flag] = raw.trim();
  }
  return merged;
}

async function engineFrom(values: Record<string, unknown>, persistentKey: boolean) {
  const name = (values.estimator as string | undefined) ?? "default";
  if (!(ESTIMATOR_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--estimator takes one of ${ESTIMATOR_NAMES.join(", ")} (got "${name}")`);
  }
  const estimator = await createEstimator(name).catch((err: Error) => {
    // The exact estimators need the optional gpt-tokenizer package: a choice the user can change,
    // not a bug, so one line saying what to install (exit status 2) instead of a stack.
    throw new UsageError(err.message);
  });
  const key = loadCursorKey(values["cursor-key-file"] as string | undefined, persistentKey);
  return createEngine({
    codec: new CursorCodec({ key }),
    estimator,
    settings: settingsFrom(values),
  });
}

/** `serve`'s roots: `--root` and arguments, else `PAGEWISE_ROOTS`. */
function serveRoots(values: Record<string, unknown>, positionals: string[]): string[] {
  const flagged = [...((values.root as string[] | undefined) ?? []), ...positionals];
  if (flagged.length > 0) return flagged;
  const env = process.env.PAGEWISE_ROOTS;
  return env ? env.split(path.delimiter).filter((part) => part !== "") : [];
}

async function serve(argv: string[]): Promise<number> {
  const parsed = parseArgs({ args: argv, options: parseConfigOf("serve"), allowPositionals: true });
  if (parsed.values.help || parsed.values.version) {
    process.stdout.write(`${parsed.values.help ? commandHelp("serve") : PACKAGE_VERSION}\n`);
    return 0;
  }
  const rootDirs = serveRoots(parsed.values, parsed.positionals);
  const values: Record<string, unknown> = {
    ...withEnvironment("serve", parsed.values),
    root: rootDirs,
  };
  if (values.http !== undefined) {
    const { verifier, ...http } = httpSettingsFrom(values);
    const engine = await engineFrom(values, false);
    // Loaded only here: a stdio server never pays for the HTTP stack at start-up.
    const { runHttpServer } = await import("../mcp/http.js");
    try {
      await runHttpServer({
        engine,
        ...http,
        ...(verifier ? { verifier: verifier.watch() } : {}),
        ephemeralKey: values["cursor-key-file"] === undefined && !process.env.PAGEWISE_CURSOR_KEY,
        onClose: () => verifier?.close(),
      });
    } catch (err) {
      verifier?.close();
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
        throw new UsageError(`cannot listen on ${http.host}:${http.port} (${code})`);
      throw err;
    }
    return 0;
  }
  if (rootDirs.length === 0)
    throw new UsageError(
      "serve needs at least one --root DIR (or DIR arguments, or PAGEWISE_ROOTS)",
    );
  const roots: Roots = rootsFrom(rootDirs);
  const engine = await engineFrom(values, false);
  const caller = { identity: "anonymous", roots };
  // The SDK's stdio entry decides the connection's protocol era (2026-07-28 or 2025) and builds
  // the instance from this factory.
  let closed!: () => void;
  const ended = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const stdio = serveStdio(() => createMcpServer(engine, caller), { onerror: () => {} });
  process.stderr.write(
    `pagewise ${PACKAGE_VERSION} serving MCP on stdio; roots: ${roots.dirs.join(", ")}; estimator: ${engine.estimator.name}\n`,
  );
  process.stdin.on("end", closed);
  process.stdin.on("close", closed);
  await ended;
  await stdio.close().catch(() => {});
  return 0;
}

/** A `file://` URI (any case of the scheme) as a path; anything else as given. */
function pathOfTarget(target: string): string {
  return /^file:\/\//i.test(target) ? fileURLToPath(`file://${target.slice(7)}`) : target;
}

function statOrUndefined(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

/** The nearest existing directory at or above `p`, so a missing target is NOT_FOUND, not denied. */
function nearestDirectory(p: string): string {
  let dir = p;
  while (!statOrUndefined(dir)?.isDirectory()) {
    const parent = path.dirname(dir);
    if (parent === dir) return dir;
    dir = parent;
  }
  return realpathSync(dir);
}

/** Glob metacharacters escaped, so a file name matches itself only. */
const literalGlob = (name: string) => name.replace(/[^\p{L}\p{N}_ -]/gu, "\\$&");

/**
 * The confinement of a terminal command. With `--root`, those directories. Without, the named
 * target's own location (a file's directory, a directory itself; the current directory when no
 * target is named), so any path the user names can be read. Rewrites `args.path` to the canonical
 * target, and turns `search PATTERN FILE` into a search of FILE's directory limited to FILE.
 */
function confine(
  command: TerminalCommand,
  args: Record<string, unknown>,
  rootFlags: string[] | undefined,
): Roots {
  const target = typeof args.path === "string" ? pathOfTarget(args.path) : undefined;
  let roots: Roots;
  let resolved: string | undefined;
  if (rootFlags && rootFlags.length > 0) {
    roots = rootsFrom(rootFlags);
    if (target !== undefined) resolved = path.resolve(roots.dirs[0]!, target);
  } else if (target === undefined) {
    roots = rootsFrom([process.cwd()]);
  } else {
    const absolute = path.resolve(target);
    let real: string | undefined;
    try {
      real = realpathSync(absolute);
    } catch {
      real = undefined;
    }
    const isDir = real !== undefined && statOrUndefined(real)?.isDirectory() === true;
    const root =
      real === undefined ? nearestDirectory(absolute) : isDir ? real : path.dirname(real);
    roots = rootsFrom([root]);
    resolved = real ?? absolute;
    args.path = resolved;
  }
  if (command === "search" && resolved !== undefined && statOrUndefined(resolved)?.isFile()) {
    if (args.glob !== undefined) {
      throw new UsageError(
        `${args.path} is a file: search it without --glob, or give its directory with --glob`,
      );
    }
    // The search tool walks directories: search the file's directory, limited to the file.
    const name = path.basename(resolved);
    args.path = path.dirname(resolved);
    args.glob = `./${literalGlob(name)}`;
    if (name.startsWith(".") && args.include_hidden === undefined) args.include_hidden = true;
  }
  return roots;
}

/** Tool arguments from positionals and flags; numbers are checked here to name the flag. */
function toolArgs(
  command: TerminalCommand,
  values: Record<string, unknown>,
  positionals: string[],
): Record<string, unknown> {
  const slots = COMMANDS[command].positionals;
  if (positionals.length > slots.length) {
    throw new UsageError(
      `too many arguments (${positionals.map((p) => JSON.stringify(p)).join(" ")}): ${COMMANDS[command].usage}`,
    );
  }
  const args: Record<string, unknown> = {};
  positionals.forEach((value, i) => {
    args[slots[i]!] = value;
  });
  for (const option of optionsOf(command)) {
    const raw = values[option.flag];
    if (option.arg === undefined || raw === undefined || raw === false) continue;
    if (option.sets !== undefined) {
      args[option.arg] = option.sets;
    } else if (option.value === "N") {
      const n = Number(raw);
      if ((raw as string).trim() === "" || !Number.isFinite(n))
        throw new UsageError(`--${option.flag} takes a number (got "${raw}")`);
      args[option.arg] = n;
    } else {
      args[option.arg] = raw;
    }
  }
  return args;
}

/** `json`: what is missing, said in terms of the command line. */
function checkJsonArgs(args: Record<string, unknown>): void {
  if (args.cursor !== undefined) return;
  if (args.path === undefined)
    throw new UsageError("json needs FILE and QUERY (or --cursor C to continue a previous page)");
  if (args.query === undefined) {
    throw new UsageError(
      `json needs a QUERY after FILE: a JSONPath such as '$.items[*].id', or with --pointer a JSON Pointer such as /items/0`,
    );
  }
  args.language ??= "jsonpath";
}

/**
 * The tool's text. A person who runs `pagewise read FILE` on a terminal gets the first page of a
 * file too large to print whole (and the command for the next); JSON output keeps the tool's answer.
 */
async function runToolFor(
  inv: Invocation,
  // biome-ignore lint/suspicious/noExplicitAny: one of the heterogeneous tool definitions
  tool: ToolDefinition<any>,
  ctx: ToolContext,
  raw: boolean,
): Promise<string> {
  const { args } = inv as { args: Record<string, unknown> };
  try {
    return await tool.run(parseToolArgs(tool.input, args), ctx);
  } catch (err) {
    const firstPage = raw && inv.command === "read" && args.max_tokens === undefined;
    if (!(firstPage && err instanceof PagewiseError && err.code === "RESPONSE_TOO_LARGE"))
      throw err;
    args.max_tokens = ctx.settings.defaultMaxTokens;
    process.stderr.write(
      `pagewise: the file is larger than --max-read-tokens; its first page of ${args.max_tokens} tokens:\n`,
    );
    return tool.run(parseToolArgs(tool.input, args), ctx);
  }
}

/** The content (or the tool's text as is) on stdout; notes and follow-up commands on stderr. */
function writeOutput(rendered: RawOutput | undefined, text: string): void {
  if (!rendered) {
    process.stdout.write(text.endsWith("\n") || !text.startsWith("{") ? text : `${text}\n`);
    return;
  }
  process.stdout.write(rendered.stdout);
  if (rendered.stderr.length === 0) return;
  // On a shared terminal, keep the notes off the last content line.
  const out = rendered.stdout;
  const endsOpen =
    out.length > 0 && !(typeof out === "string" ? out.endsWith("\n") : out.at(-1) === 0x0a);
  process.stderr.write(
    `${endsOpen && process.stdout.isTTY ? "\n" : ""}${rendered.stderr.join("\n")}\n`,
  );
}

/**
 * Terminal commands: the tool's arguments from the option table, the tool's text, and the content
 * itself (`--raw`) or the JSON page (`--json`) on stdout.
 */
async function runTerminal(command: TerminalCommand, argv: string[]): Promise<number> {
  const parsed = parseArgs({ args: argv, options: parseConfigOf(command), allowPositionals: true });
  if (parsed.values.help || parsed.values.version) {
    process.stdout.write(`${parsed.values.help ? commandHelp(command) : PACKAGE_VERSION}\n`);
    return 0;
  }
  const values = withEnvironment(command, parsed.values);
  if (values.raw && values.json) throw new UsageError("--raw and --json exclude each other");
  const raw =
    RAW_COMMANDS.includes(command) &&
    !values.json &&
    (values.raw === true || process.stdout.isTTY === true);
  const args = toolArgs(command, values, parsed.positionals);
  if (command === "json") checkJsonArgs(args);
  // Paths are shown as the user spelled the place: absolute for an absolute target (or, with no
  // target, such as a continuation, an absolute --root), else relative to the current directory.
  const named = (args.path as string | undefined) ?? (values.root as string[] | undefined)?.[0];
  const absolutePaths = named !== undefined && (path.isAbsolute(named) || /^file:/i.test(named));
  const roots = confine(command, args, values.root as string[] | undefined);
  const engine = await engineFrom(values, true);
  const inv: Invocation = {
    command,
    args,
    rootDirs: roots.dirs,
    outputFlags: values.raw ? ["--raw"] : values.json ? ["--json"] : [],
    absolutePaths,
  };
  const tool = TOOLS.find((t) => t.name === COMMANDS[command].tool)!;
  const progress =
    process.stderr.isTTY === true
      ? progressLine(process.stderr, command === "search" ? "files" : "entries")
      : undefined;
  const ctx: ToolContext = {
    ...engine,
    caller: { identity: "anonymous", roots },
    ...(progress ? { progress: (n: number) => progress.report(n) } : {}),
  };
  let text: string;
  try {
    text = await runToolFor(inv, tool, ctx, raw);
  } catch (err) {
    const error = err instanceof PagewiseError ? err : toPagewiseError(err);
    const body = (error.toJSON() as { error: Parameters<typeof renderError>[1] }).error;
    process.stderr.write(renderError(inv, body, !raw));
    return exitStatus(error.code);
  } finally {
    progress?.done();
  }
  writeOutput(raw ? renderRaw(inv, text, process.cwd()) : undefined, text);
  return 0;
}
