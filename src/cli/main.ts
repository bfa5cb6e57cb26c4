/**
 * @module
 * The `pagewise` command: `serve` (MCP over stdio or HTTP) and the tools as terminal commands.
 * The first word picks the command, and only that command's modules are loaded: `--version`
 * loads nothing else, a terminal command loads its own source and never the MCP SDK or the tools'
 * schemas (zod), and only `serve` loads those. Perf: the start of a command is mostly the modules
 * it loads (`--version` loading everything took 3.5× `node -e 0`); test/cli.e2e.test.ts checks
 * what each command loads.
 */
import { PACKAGE_VERSION } from "../version.js";
import { closest, exitStatus, UsageError } from "./usage.js";

const TERMINAL: readonly string[] = ["read", "list", "search", "tail", "json"];
const COMMAND_NAMES: readonly string[] = ["serve", ...TERMINAL];

async function help(topic: string | undefined, out: NodeJS.WriteStream): Promise<void> {
  const { commandHelp, mainHelp } = await import("./options.js");
  if (topic !== undefined && !COMMAND_NAMES.includes(topic))
    throw new UsageError(`unknown command "${topic}"`);
  out.write(`${topic ? commandHelp(topic as "serve") : mainHelp(PACKAGE_VERSION)}\n`);
}

async function run(command: string | undefined, rest: string[]): Promise<number> {
  if (command === "serve") return (await import("./serve.js")).serve(rest);
  if (command !== undefined && TERMINAL.includes(command)) {
    const { runTerminal } = await import("./terminal.js");
    return runTerminal(command as "read", rest);
  }
  switch (command) {
    case undefined:
      // Like most tools: usage on stderr, status 2, when there is nothing to do.
      await help(undefined, process.stderr);
      return 2;
    case "help":
    case "--help":
    case "-h":
      await help(rest[0], process.stdout);
      return 0;
    case "version":
    case "--version":
    case "-V":
    case "-v":
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return 0;
    default: {
      const near = closest(command, COMMAND_NAMES);
      throw new UsageError(
        `unknown command "${command}"${near ? `; did you mean ${near}?` : ""} (the commands are ${COMMAND_NAMES.join(", ")})`,
      );
    }
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    return await run(command, rest);
  } catch (err) {
    const about = COMMAND_NAMES.includes(command ?? "")
      ? `pagewise ${command} --help`
      : "pagewise --help";
    if (err instanceof UsageError) {
      process.stderr.write(`pagewise: ${err.message}\nRun "${about}" for usage.\n`);
      return 2;
    }
    // Loaded by now: whatever threw one imported it.
    const { PagewiseError } = await import("../core/index.js");
    if (err instanceof PagewiseError) {
      process.stderr.write(`pagewise: ${err.code}: ${err.message}\n`);
      return exitStatus(err.code);
    }
    throw err;
  }
}
