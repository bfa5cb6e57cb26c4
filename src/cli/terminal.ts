/**
 * @module
 * The terminal commands (`read`, `list`, `search`, `tail`, `json`): flags into tool arguments, the
 * command's confinement, the call, and what goes to stdout. On a terminal, one page of the content
 * itself (`json`: each match pretty, with its path) and the command for the next page on stderr;
 * into a pipe, all of the content (`tail`: its newest page); with `--raw`, one page of content;
 * with `--json`, one page as the tool's JSON.
 */
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Roots } from "../access/index.js";
import { FileVersions, PagewiseError, toPagewiseError } from "../core/index.js";
import { MAX_LIST_LIMIT, MAX_SEARCH_LIMIT } from "../sources/limits.js";
import { loadSource, type ToolContext } from "../tools/context.js";
import { PACKAGE_VERSION } from "../version.js";
import { parseCommandLine, toolArgs, withEnvironment } from "./arguments.js";
import { CALLS } from "./calls.js";
import { engineFrom } from "./engine.js";
import { STREAM_PAGE_TOKENS } from "./limits.js";
import { commandHelp, type TerminalCommand } from "./options.js";
import { type Invocation, renderError } from "./output.js";
import { progressLine } from "./progress.js";
import { PageRenderer, type RawOutput } from "./render.js";
import { rootsFrom } from "./settings.js";
import { OutputClosed, Stdout } from "./stdout.js";
import { copyFile, walkPages } from "./stream.js";
import { exitStatus, UsageError } from "./usage.js";

/** A file:// URI (any case of the scheme) as a path; anything else as given. */
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

/**
 * The confinement of a terminal command. With `--root`, those directories. Without, the named
 * target's own location (a file's directory, a directory itself; the current directory when no
 * target is named), so any path the user names can be read. Rewrites `args.path` to the canonical
 * target.
 */
function confine(
  command: TerminalCommand,
  args: Record<string, unknown>,
  rootFlags: string[] | undefined,
): Roots {
  const target = typeof args.path === "string" ? pathOfTarget(args.path) : undefined;
  if (rootFlags && rootFlags.length > 0) {
    const roots = rootsFrom(rootFlags);
    if (command === "search" && args.glob !== undefined && target !== undefined) {
      if (statOrUndefined(path.resolve(roots.dirs[0]!, target))?.isFile()) throw globOnFile(args);
    }
    return roots;
  }
  if (target === undefined) return rootsFrom([process.cwd()]);
  const absolute = path.resolve(target);
  let real: string | undefined;
  try {
    real = realpathSync(absolute);
  } catch {
    real = undefined;
  }
  const isDir = real !== undefined && statOrUndefined(real)?.isDirectory() === true;
  if (command === "search" && args.glob !== undefined && real !== undefined && !isDir)
    throw globOnFile(args);
  args.path = real ?? absolute;
  return rootsFrom([
    real === undefined ? nearestDirectory(absolute) : isDir ? real : path.dirname(real),
  ]);
}

function globOnFile(args: Record<string, unknown>): UsageError {
  return new UsageError(
    `${args.path} is a file: search it without --glob, or give its directory with --glob`,
  );
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

/** What stdout gets: one page as JSON, one page of content, or all of the content. */
type OutputMode = "json" | "page" | "stream";

/** Arguments that ask for one page rather than all of the content. */
const PAGE_ARGS: Record<TerminalCommand, readonly string[]> = {
  read: ["cursor", "max_tokens"],
  list: ["cursor", "max_tokens", "limit", "offset"],
  search: ["cursor", "max_tokens", "limit", "offset"],
  tail: [],
  json: ["cursor", "max_tokens", "max_items"],
};

function outputMode(
  command: TerminalCommand,
  values: Record<string, unknown>,
  args: Record<string, unknown>,
): OutputMode {
  if (values.json) return "json";
  if (values.raw || process.stdout.isTTY === true || command === "tail") return "page";
  return PAGE_ARGS[command].some((name) => args[name] !== undefined) ? "page" : "stream";
}

/**
 * One call's text. `read` without a budget on a terminal prints the whole file, or, over
 * --max-read-tokens, its first page (and the command for the next).
 */
async function callWithFallback(
  inv: Invocation,
  ctx: ToolContext,
  mode: OutputMode,
): Promise<string> {
  const args = inv.args as Record<string, unknown>;
  try {
    return await CALLS[inv.command](args, ctx);
  } catch (err) {
    const firstPage = mode === "page" && inv.command === "read" && args.max_tokens === undefined;
    if (!(firstPage && err instanceof PagewiseError && err.code === "RESPONSE_TOO_LARGE"))
      throw err;
    args.max_tokens = ctx.settings.defaultMaxTokens;
    process.stderr.write(
      `pagewise: the file is larger than --max-read-tokens; its first page of ${args.max_tokens} tokens:\n`,
    );
    return CALLS[inv.command](args, ctx);
  }
}

/** One page's content (or the tool's text as is) on stdout; notes and follow-ups on stderr. */
async function writePage(out: Stdout, rendered: RawOutput | undefined, text: string) {
  if (!rendered) {
    await out.write(text.endsWith("\n") || !text.startsWith("{") ? text : `${text}\n`);
    return;
  }
  await out.write(rendered.stdout);
  if (rendered.stderr.length === 0) return;
  // On a shared terminal, keep the notes off the last content line.
  const content = rendered.stdout;
  const endsOpen =
    content.length > 0 &&
    !(typeof content === "string" ? content.endsWith("\n") : content.at(-1) === 0x0a);
  process.stderr.write(
    `${endsOpen && process.stdout.isTTY ? "\n" : ""}${rendered.stderr.join("\n")}\n`,
  );
}

/** All of the content into a pipe. */
async function stream(inv: Invocation, ctx: ToolContext, out: Stdout): Promise<void> {
  const args = inv.args as Record<string, unknown>;
  if (inv.command === "read" && args.offset === undefined && args.limit === undefined) {
    return copyFile(ctx, args.path as string, out);
  }
  if (inv.command === "json") {
    const { streamJsonValues } = await loadSource.json();
    await streamJsonValues(
      ctx,
      {
        path: args.path as string,
        language: args.language as "jsonpath" | "pointer",
        query: args.query as string,
        ...(args.format !== undefined ? { format: args.format as "auto" } : {}),
        ...(ctx.settings.jsonLimits ? { limits: ctx.settings.jsonLimits } : {}),
      },
      (chunk) => out.write(chunk),
    );
    return;
  }
  // Large pages: none is shown to a model. A search needs no total to print its matches.
  args.max_tokens = STREAM_PAGE_TOKENS;
  if (inv.command === "list") args.limit = MAX_LIST_LIMIT;
  if (inv.command === "search") {
    args.limit = MAX_SEARCH_LIMIT;
    args.count ??= "none";
  }
  const renderer = new PageRenderer(inv, { cwd: cwdOf(inv), continuation: false, pretty: false });
  await walkPages(inv, ctx, renderer, out);
}

const cwdOf = (inv: Invocation) => (inv.absolutePaths ? undefined : process.cwd());

export async function runTerminal(command: TerminalCommand, argv: string[]): Promise<number> {
  const parsed = parseCommandLine(command, argv);
  if (parsed.values.help || parsed.values.version) {
    process.stdout.write(`${parsed.values.help ? commandHelp(command) : PACKAGE_VERSION}\n`);
    return 0;
  }
  const values = withEnvironment(command, parsed.values);
  if (values.raw && values.json) throw new UsageError("--raw and --json exclude each other");
  const args = toolArgs(command, values, parsed.positionals);
  if (command === "json") checkJsonArgs(args);
  const mode = outputMode(command, values, args);
  // Paths are shown as the user spelled the place: absolute for an absolute target (or, with no
  // target, such as a continuation, an absolute --root), else relative to the current directory.
  const named = (args.path as string | undefined) ?? (values.root as string[] | undefined)?.[0];
  const absolutePaths = named !== undefined && (path.isAbsolute(named) || /^file:/i.test(named));
  const roots = confine(command, args, values.root as string[] | undefined);
  const engine = await engineFrom(values, true);
  const settings =
    mode === "stream"
      ? {
          ...engine.settings,
          maxTokensCap: Math.max(engine.settings.maxTokensCap, STREAM_PAGE_TOKENS),
        }
      : engine.settings;
  const inv: Invocation = {
    command,
    args,
    rootDirs: roots.dirs,
    outputFlags: values.raw ? ["--raw"] : values.json ? ["--json"] : [],
    absolutePaths,
  };
  const progress =
    process.stderr.isTTY === true
      ? progressLine(process.stderr, command === "search" ? "files" : "entries")
      : undefined;
  const ctx: ToolContext = {
    ...engine,
    settings,
    versions: new FileVersions(),
    caller: { identity: "anonymous", roots },
    ...(progress ? { progress: (n: number) => progress.report(n) } : {}),
  };
  const out = new Stdout();
  try {
    if (mode === "stream") await stream(inv, ctx, out);
    else {
      const text = await callWithFallback(inv, ctx, mode);
      const pretty = process.stdout.isTTY === true && !values.raw;
      const rendered =
        mode === "json"
          ? undefined
          : await new PageRenderer(inv, { cwd: cwdOf(inv), continuation: true, pretty }).render(
              text,
            );
      await writePage(out, rendered, text);
    }
    return 0;
  } catch (err) {
    if (err instanceof OutputClosed || out.closed) return 0;
    const error = err instanceof PagewiseError ? err : toPagewiseError(err);
    const body = (error.toJSON() as { error: Parameters<typeof renderError>[1] }).error;
    process.stderr.write(renderError(inv, body, mode === "json"));
    return exitStatus(error.code);
  } finally {
    progress?.done();
    out.release();
  }
}
