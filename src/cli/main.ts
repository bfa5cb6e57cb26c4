/**
 * @module
 * The `pagewise` command: `serve` (MCP over stdio) and the tools as terminal commands that print
 * the same JSON pages.
 */
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { Roots } from "../access/index.js";
import {
  CursorCodec,
  createEstimator,
  type ErrorCode,
  ESTIMATOR_NAMES,
  PagewiseError,
  toPagewiseError,
} from "../core/index.js";
import { createEngine, createMcpServer, runHttpServer } from "../mcp/index.js";
import { parseArgs as parseToolArgs, TOOLS, type ToolContext } from "../tools/index.js";
import { PACKAGE_VERSION } from "../version.js";
import {
  httpSettingsFrom,
  JSON_LIMIT_FLAGS,
  loadCursorKey,
  settingsFrom,
  UsageError,
} from "./settings.js";

const COMMON_HELP = `Budget and engine options:
  --estimator NAME          token estimator: ${ESTIMATOR_NAMES.join(", ")} (default: default)
  --default-max-tokens N    budget when a call gives no max_tokens (default 8000)
  --max-tokens-cap N        largest budget honoured; larger requests are lowered (default 100000)
  --max-read-tokens N       ceiling of read in line mode (default 25000)
  --max-walk-entries N      directory entries one list/search walk may read (default 2000000)
  --search-stall-ms N       stop a search whose regex makes no progress for N ms (default 5000)
  --cursor-key-file FILE    key that signs cursors (or set PAGEWISE_CURSOR_KEY)
JSON tools (docs/json.md):
  --json-handle-ttl-ms N    idle time before a json_open handle expires (default 900000)
  --max-json-handles N      json_open handles kept per process, least recently used closed (default 64)
  --json-max-depth N, --json-max-string-bytes N, --json-max-number-bytes N,
  --json-max-record-bytes N, --json-max-object-members N, --json-max-buffered-matches N,
  --json-max-filter-value-bytes N, --json-max-query-threads N, --json-max-regex-states N,
  --json-max-regex-input-chars N, --json-probe-bytes N
                            limits of the JSON engine (RESOURCE_LIMIT_EXCEEDED when hit)`;

const HELP: Record<string, string> = {
  main: `pagewise ${PACKAGE_VERSION} — read content of any size in pages that fit a token budget.

Usage:
  pagewise serve --root DIR [--root DIR…] [options]   serve MCP over stdio
  pagewise serve --http [HOST:]PORT [options]          serve MCP over HTTP (stateless, many replicas)
  pagewise read FILE [--max-tokens N] [--cursor C]      print one page of a file
  pagewise list [DIR] [--recursive] [--glob G]          list a directory in pages
  pagewise search PATTERN [DIR] [--context N]          search file contents
  pagewise tail FILE [--before C] [--after C] [--grep P]  newest records of a log or JSONL file
  pagewise json FILE QUERY [--pointer]                 JSONPath (or JSON Pointer) over JSON/JSONL
  pagewise json FILE QUERY [--pointer] [--cursor C]     JSONPath (or pointer) matches of a JSON/JSONL file
  pagewise help [COMMAND]                              this help, or a command's

Run "pagewise COMMAND --help" for a command's options.`,
  serve: `Usage: pagewise serve --root DIR [--root DIR…] [options]

Serves the MCP tools over stdio (JSON-RPC on stdout, logs on stderr).
Without --cursor-key-file or PAGEWISE_CURSOR_KEY, cursors are signed with a random key and die
with the process.

  --root DIR                directory the tools may read (repeatable; the first is the default)
${COMMON_HELP}

Serving over HTTP (Streamable HTTP at /mcp, stateless; GET /healthz; see docs/http.md):
  --http [HOST:]PORT        serve over HTTP instead of stdio (HOST default 127.0.0.1; port 0 picks
                            a free port, logged in the "listening" line)
  --auth-file FILE          identities: {"identities":[{"name","token_sha256","roots":[DIR…]}]};
                            requests need Authorization: Bearer TOKEN; re-read on change. Without
                            it only loopback can be bound and every caller is "anonymous" (--root)
  --allowed-host NAME       also accept this name in Host/Origin (repeatable; e.g. the proxy's)
  --public-url URL          public base URL, for the OAuth resource metadata behind a proxy
  --max-concurrent-scans N  tool calls run at once per process (default 16)
  --scan-queue-ms N         wait for a free slot up to N ms, then RESOURCE_LIMIT_EXCEEDED (default 10000)
  --max-body-bytes N        largest request body; larger is HTTP 413 (default 1048576)
  --request-timeout-ms N    stop a request after N ms with RESOURCE_LIMIT_EXCEEDED (default 30000)`,
  read: `Usage: pagewise read FILE [options]

Prints one page of FILE as JSON {uri, content, version, has_more, next_cursor}; run again with
--cursor to get the next page. Without --max-tokens and --cursor, prints the lines as plain text.

  --max-tokens N            token budget of the page
  --cursor C                continue from a previous page's next_cursor
  --offset N                first line (0-based)
  --limit N                 number of lines
  --encoding base64         raw bytes of a file that is not UTF-8 (page mode)
  --root DIR                directory that confines the read (default: the current directory)
${COMMON_HELP}
Terminal commands keep their cursor key in ~/.config/pagewise/cursor.key unless one is given.`,
  tail: `Usage: pagewise tail FILE [options]

Prints the newest records (lines) of FILE that fit the budget, oldest first, as JSON
{uri, items:[{position, text, truncated?, partial?, line_cursor?}], has_earlier, earlier_cursor,
has_later, later_cursor, version}. Run again with --before EARLIER_CURSOR to page back, or later
with --after LATER_CURSOR to get the records appended since. See docs/tail.md.

  --before C                records before a previous page (its earlier_cursor)
  --after C                 records after a previous page (its later_cursor), appended ones included
  --from-start              begin at the first record instead of the newest
  --grep P                  only records matching the regular expression P (smart case)
  --grep-literal            match --grep P as plain text
  --limit N                 most records per page (default 50, at most 1000)
  --max-chars-per-item N    clamp longer records (default 2000); read the rest via line_cursor
  --max-tokens N            token budget of the page
  --root DIR                directory that confines the read (default: the current directory)
${COMMON_HELP}
Terminal commands keep their cursor key in ~/.config/pagewise/cursor.key unless one is given.`,
};

HELP.json = `Usage: pagewise json FILE QUERY [options]

Runs a JSONPath (RFC 9535) query — or, with --pointer, a JSON Pointer (RFC 6901) — over a JSON,
JSONL or JSON-seq file, streaming, and prints one page as JSON {language, query, items:[{path,
value}], complete, next_cursor, stats}; values are printed exactly as spelled in the file. Run
again with --cursor NEXT_CURSOR for the next page. See docs/json.md.

  --pointer                 QUERY is a JSON Pointer ("/orders/0/id"), not JSONPath
  --format F                auto (default), json, jsonl or json-seq
  --max-items N             matches per page (default 100, at most 1000)
  --max-tokens N            token budget of the page
  --cursor C                continue from a previous page's next_cursor
  --root DIR                directory that confines the read (default: the current directory)
${COMMON_HELP}
Terminal commands keep their cursor key in ~/.config/pagewise/cursor.key unless one is given.`;

const ENGINE_OPTIONS = {
  estimator: { type: "string" },
  "default-max-tokens": { type: "string" },
  "max-tokens-cap": { type: "string" },
  "max-read-tokens": { type: "string" },
  "max-walk-entries": { type: "string" },
  "search-stall-ms": { type: "string" },
  "cursor-key-file": { type: "string" },
  "json-handle-ttl-ms": { type: "string" },
  "max-json-handles": { type: "string" },
  ...Object.fromEntries(Object.keys(JSON_LIMIT_FLAGS).map((f) => [f, { type: "string" as const }])),
  root: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

const HTTP_OPTIONS = {
  http: { type: "string" },
  "auth-file": { type: "string" },
  "allowed-host": { type: "string", multiple: true },
  "public-url": { type: "string" },
  "max-concurrent-scans": { type: "string" },
  "scan-queue-ms": { type: "string" },
  "max-body-bytes": { type: "string" },
  "request-timeout-ms": { type: "string" },
} as const;

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

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve":
        return await serve(rest);
      case "read":
      case "list":
      case "search":
      case "tail":
      case "json":
        return await runTool(command === "json" ? "json_read" : command, rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(`${HELP[rest[0] ?? "main"] ?? HELP.main}\n`);
        return 0;
      case "--version":
      case "-v":
        process.stdout.write(`${PACKAGE_VERSION}\n`);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (
      err instanceof UsageError ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      process.stderr.write(
        `pagewise: ${(err as Error).message}\nRun "pagewise --help" for usage.\n`,
      );
      return 2;
    }
    throw err;
  }
}
async function engineFrom(values: Record<string, unknown>, persistentKey: boolean) {
  const name = (values.estimator as string | undefined) ?? "default";
  if (!(ESTIMATOR_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--estimator takes one of ${ESTIMATOR_NAMES.join(", ")} (got "${name}")`);
  }
  const estimator = await createEstimator(name);
  const key = loadCursorKey(values["cursor-key-file"] as string | undefined, persistentKey);
  return createEngine({
    codec: new CursorCodec({ key }),
    estimator,
    settings: settingsFrom(values),
  });
}

async function serve(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...ENGINE_OPTIONS, ...HTTP_OPTIONS },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${HELP.serve}\n`);
    return 0;
  }
  if (values.http !== undefined) {
    const { verifier, ...http } = httpSettingsFrom(values);
    const engine = await engineFrom(values, false);
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
  if (!values.root || values.root.length === 0)
    throw new UsageError("serve needs at least one --root DIR");
  let roots: Roots;
  try {
    roots = new Roots(values.root);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const engine = await engineFrom(values, false);
  const caller = { identity: "anonymous", roots };
  const server = createMcpServer(engine, () => caller);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  process.stderr.write(
    `pagewise ${PACKAGE_VERSION} serving MCP on stdio; roots: ${roots.dirs.join(", ")}; estimator: ${engine.estimator.name}${engine.codec ? "" : ""}\n`,
  );
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on("end", () => resolve());
  });
  return 0;
}

/**
 * Terminal commands mirror the tools: `--some-option V` becomes the argument `some_option`, the
 * first positional is `path`, and values are coerced by the tool's own schema (numbers, booleans),
 * so every tool gets a command without code of its own here.
 */
async function runTool(name: string, argv: string[]): Promise<number> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new UsageError(`unknown command "${name}"`);
  const schema = z.toJSONSchema(tool.input, { io: "input" }) as {
    properties?: Record<string, { type?: string | string[] }>;
  };
  const properties = schema.properties ?? {};
  const options: Record<
    string,
    { type: "string" | "boolean"; multiple?: boolean; short?: string }
  > = { ...ENGINE_OPTIONS };
  for (const [prop, def] of Object.entries(properties)) {
    if ((POSITIONALS[name] ?? ["path"]).includes(prop)) continue;
    const flag = prop.replaceAll("_", "-");
    options[flag] = { type: def.type === "boolean" ? "boolean" : "string" };
    // Node 20's parseArgs has no negation: `--no-respect-gitignore` is an option of its own.
    if (def.type === "boolean") options[`no-${flag}`] = { type: "boolean" };
  }
  // `pagewise json FILE QUERY`: JSONPath unless --pointer.
  if (name === "json_read") options.pointer = { type: "boolean" };
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true });
  if (values.help) {
    process.stdout.write(`${toolHelp(name, properties, POSITIONALS[name] ?? ["path"])}\n`);
    return 0;
  }
  const rootValues = values.root as string[] | undefined;
  const roots = new Roots(rootValues && rootValues.length > 0 ? rootValues : [process.cwd()]);
  const engine = await engineFrom(values, true);
  const args: Record<string, unknown> = {};
  const slots = POSITIONALS[name] ?? ["path"];
  if (positionals.length > slots.length) throw new UsageError(`too many arguments for ${name}`);
  positionals.forEach((value, i) => {
    args[slots[i]!] = value;
  });
  for (const [prop, def] of Object.entries(properties)) {
    const flag = prop.replaceAll("_", "-");
    const raw = values[`no-${flag}`] === true ? false : values[flag];
    if (raw === undefined) continue;
    const types = Array.isArray(def.type) ? def.type : [def.type];
    args[prop] =
      typeof raw === "string" && (types.includes("number") || types.includes("integer"))
        ? Number(raw)
        : raw;
  }
  if (name === "json_read" && args.cursor === undefined && args.language === undefined)
    args.language = values.pointer ? "pointer" : "jsonpath";
  const ctx: ToolContext = { ...engine, caller: { identity: "anonymous", roots } };
  try {
    const text = await tool.run(parseToolArgs(tool.input, args), ctx);
    process.stdout.write(text.endsWith("\n") || !text.startsWith("{") ? text : `${text}\n`);
    return 0;
  } catch (err) {
    const error = err instanceof PagewiseError ? err : toPagewiseError(err);
    process.stderr.write(`${JSON.stringify(error.toJSON())}\n`);
    return exitStatus(error.code);
  }
}

/** Which arguments the positionals of each command fill, in order. */
const POSITIONALS: Record<string, string[]> = {
  read: ["path"],
  list: ["path"],
  tail: ["path"],
  search: ["pattern", "path"],
  json_read: ["path", "query"],
};

function toolHelp(
  name: string,
  properties: Record<string, { type?: string | string[]; description?: string }>,
  positionalNames: string[],
): string {
  const fixed = HELP[name === "json_read" ? "json" : name];
  if (fixed) return fixed;
  const flag = (prop: string, def: { type?: string | string[] }) =>
    `--${prop.replaceAll("_", "-")}${def.type === "boolean" ? "" : " V"}`;
  const positional = positionalNames.map(
    (p) => `  ${p.toUpperCase().padEnd(24)} ${properties[p]?.description ?? ""}`,
  );
  const lines = Object.entries(properties)
    .filter(([prop]) => !positionalNames.includes(prop))
    .map(([prop, def]) => `  ${flag(prop, def).padEnd(24)} ${def.description ?? ""}`);
  const command = name === "json_read" ? "json" : name;
  const usage = positionalNames.map((p) => `[${p.toUpperCase()}]`).join(" ");
  return `Usage: pagewise ${command} ${usage} [options]

Prints the same JSON page as the MCP tool "${name}". Boolean options take --no-NAME to turn off.

${positional.join("\n")}
${lines.join("\n")}
  --root DIR               directory that confines the command (default: the current directory)
${COMMON_HELP}`;
}
