/**
 * @module
 * A command line into flags and tool arguments, checked against the option table (options.ts):
 * unknown flags get the nearest real one, numbers and words are checked against the bounds and
 * choices the tools' schemas publish. The CLI never loads those schemas (zod) for a terminal
 * command, so the table carries the same bounds and options.test.ts checks that they agree.
 */
import { parseArgs } from "node:util";
import { ESTIMATOR_NAMES } from "../core/index.js";
import {
  type CliOption,
  COMMANDS,
  type CommandName,
  optionsOf,
  parseConfigOf,
  type TerminalCommand,
} from "./options.js";
import { closest, UsageError } from "./usage.js";

export interface CommandLine {
  readonly values: Record<string, unknown>;
  readonly positionals: string[];
}

/** The spellings of `command`'s options (`--max-tokens`, `-F`), for suggestions. */
function spellingsOf(command: CommandName): string[] {
  return optionsOf(command).flatMap((o) => [`--${o.flag}`, ...(o.short ? [`-${o.short}`] : [])]);
}

/** What node:util's parser said, in the words of this command's options. */
function parseProblem(command: CommandName, err: Error & { code?: string }): UsageError {
  const named = /'(-[^' ]*)/.exec(err.message)?.[1];
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && named !== undefined) {
    const flag = named.split("=")[0]!;
    const near = closest(flag, spellingsOf(command));
    return new UsageError(
      `unknown option ${flag}${near ? `; did you mean ${near}?` : ""} (pagewise ${command} takes the options its --help lists)`,
    );
  }
  if (err.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && named !== undefined) {
    const option = optionsOf(command).find(
      (o) => named === `--${o.flag}` || named === `-${o.short}`,
    );
    if (option?.value !== undefined)
      return new UsageError(`--${option.flag} needs a value: --${option.flag} ${option.value}`);
    if (option) return new UsageError(`--${option.flag} takes no value`);
  }
  return new UsageError(err.message);
}

/** `argv` parsed for `command`: its flags by name and its positional arguments. */
export function parseCommandLine(command: CommandName, argv: string[]): CommandLine {
  try {
    const parsed = parseArgs({
      args: argv,
      options: parseConfigOf(command),
      allowPositionals: true,
    });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code?.startsWith("ERR_PARSE_ARGS")) throw parseProblem(command, e);
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
    // Roots combine flags and arguments, so serve reads PAGEWISE_ROOTS itself.
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

/** A flag's value as its tool argument, checked as the tool's schema would check it. */
function argumentValue(option: CliOption, raw: string): unknown {
  const flag = `--${option.flag}`;
  if (option.choices !== undefined) {
    if (option.choices.includes(raw)) return raw;
    const near = closest(raw, option.choices);
    throw new UsageError(
      `${flag} takes ${option.choices.join(", ")} (got "${raw}")${near ? `; did you mean ${near}?` : ""}`,
    );
  }
  if (option.value === "N") {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isInteger(n))
      throw new UsageError(`${flag} takes a whole number (got "${raw}")`);
    if (option.min !== undefined && n < option.min)
      throw new UsageError(`${flag} must be at least ${option.min} (got ${raw})`);
    if (option.max !== undefined && n > option.max)
      throw new UsageError(`${flag} must be at most ${option.max} (got ${raw})`);
    return n;
  }
  // Cursors: the schemas refuse an empty one.
  if (option.value === "C" && raw === "")
    throw new UsageError(`${flag} needs the cursor a previous page printed (got "")`);
  return raw;
}

/** Tool arguments from positionals and flags. */
export function toolArgs(
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
    args[option.arg] =
      option.value === undefined ? (option.sets ?? true) : argumentValue(option, raw as string);
  }
  return args;
}
