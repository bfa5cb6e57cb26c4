import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOLS } from "../tools/index.js";
import {
  COMMANDS,
  commandHelp,
  EXIT_STATUSES,
  mainHelp,
  OPTIONS,
  optionsOf,
  parseConfigOf,
  TERMINAL_COMMANDS,
} from "./options.js";
import { commandLine, type Invocation, shellQuote, translateMessage } from "./output.js";
import { progressLine } from "./progress.js";

/** Tool arguments the terminal commands leave out on purpose. */
const NOT_ON_THE_COMMAND_LINE: Record<string, string[]> = {
  json_read: ["file_id"], // handles live in a server process; a one-shot command has none
};

function propertiesOf(toolName: string): string[] {
  const tool = TOOLS.find((t) => t.name === toolName)!;
  const schema = z.toJSONSchema(tool.input, { io: "input" }) as {
    properties?: Record<string, unknown>;
  };
  return Object.keys(schema.properties ?? {});
}

describe("the option table", () => {
  it("every flag that sets a tool argument names a real argument of that command's tool", () => {
    for (const command of TERMINAL_COMMANDS) {
      const properties = propertiesOf(COMMANDS[command].tool!);
      for (const option of optionsOf(command).filter((o) => o.arg !== undefined)) {
        expect(properties, `--${option.flag} of ${command}`).toContain(option.arg);
      }
    }
  });

  it("each flag checks its value as the tool's schema does: the same bounds and choices", () => {
    for (const command of TERMINAL_COMMANDS) {
      const tool = TOOLS.find((t) => t.name === COMMANDS[command].tool)!;
      const schema = z.toJSONSchema(tool.input, { io: "input" }) as {
        properties: Record<string, { minimum?: number; maximum?: number; enum?: string[] }>;
      };
      for (const option of optionsOf(command)) {
        if (option.arg === undefined || option.value === undefined) continue;
        const property = schema.properties[option.arg]!;
        const where = `--${option.flag} of ${command}`;
        expect(option.min, where).toBe(property.minimum);
        expect(option.max, where).toBe(property.maximum);
        expect(option.choices, where).toEqual(property.enum);
      }
    }
  });

  it("every argument of a command's tool is reachable by a flag or a positional", () => {
    for (const command of TERMINAL_COMMANDS) {
      const tool = COMMANDS[command].tool!;
      const reachable = new Set([
        ...COMMANDS[command].positionals,
        ...optionsOf(command).map((o) => o.arg),
        ...(NOT_ON_THE_COMMAND_LINE[tool] ?? []),
      ]);
      for (const property of propertiesOf(tool)) {
        expect(reachable.has(property), `${command}: ${property}`).toBe(true);
      }
    }
  });

  it("no command has two options with the same flag or short name", () => {
    for (const command of Object.keys(COMMANDS) as (keyof typeof COMMANDS)[]) {
      const flags = optionsOf(command).map((o) => o.flag);
      expect(new Set(flags).size, command).toBe(flags.length);
      const shorts = optionsOf(command).flatMap((o) => (o.short ? [o.short] : []));
      expect(new Set(shorts).size, command).toBe(shorts.length);
      expect(Object.keys(parseConfigOf(command))).toEqual(flags);
    }
  });

  it("help shows every visible option of the command and no hidden one", () => {
    for (const command of Object.keys(COMMANDS) as (keyof typeof COMMANDS)[]) {
      const help = commandHelp(command);
      for (const option of optionsOf(command)) {
        const shown = new RegExp(`--${option.flag}\\b(?!-)`).test(help);
        if (!option.hidden) expect(shown, `${command} --${option.flag}`).toBe(true);
      }
      for (const line of help.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    }
    expect(mainHelp("9.9.9")).toContain("pagewise 9.9.9");
  });

  it("the README documents every environment variable and exit status", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const option of OPTIONS) if (option.env) expect(readme).toContain(`\`${option.env}\``);
    for (const [status] of EXIT_STATUSES)
      expect(readme).toMatch(new RegExp(`^\\| ${status} \\|`, "m"));
  });

  it("every environment variable belongs to one flag", () => {
    const flagsOf = new Map<string, Set<string>>();
    for (const o of OPTIONS) {
      if (o.env) flagsOf.set(o.env, (flagsOf.get(o.env) ?? new Set()).add(o.flag));
    }
    for (const [env, flags] of flagsOf) expect(flags.size, env).toBe(1);
    expect([...flagsOf.keys()]).toEqual(
      expect.arrayContaining(["PAGEWISE_ROOTS", "PAGEWISE_ESTIMATOR"]),
    );
    const help = mainHelp("0.0.0");
    for (const env of flagsOf.keys()) expect(help.split(env).length - 1, env).toBe(1);
  });
});

describe("messages in command-line terms", () => {
  it("no snake_case argument of the command survives translation", () => {
    for (const command of TERMINAL_COMMANDS) {
      const snake = optionsOf(command)
        .map((o) => o.arg)
        .filter((a): a is string => a?.includes("_") === true);
      fc.assert(
        fc.property(
          fc.array(fc.oneof(fc.constantFrom(...snake, "next_cursor"), fc.string()), {
            maxLength: 8,
          }),
          (parts) => {
            const message = `Invalid arguments: ${parts.join(" ")}`;
            const out = translateMessage(command, message);
            for (const arg of snake) {
              expect(out).not.toMatch(new RegExp(`(?<![\\w-])${arg}(?![\\w])`));
            }
          },
        ),
      );
    }
  });

  it("validation messages name the flag of the argument", () => {
    expect(translateMessage("read", "Invalid arguments: max_tokens: must be at least 1.")).toBe(
      "Invalid arguments: --max-tokens: must be at least 1.",
    );
    expect(translateMessage("search", "Invalid arguments: context: must be at most 10.")).toBe(
      "Invalid arguments: --context: must be at most 10.",
    );
    // Output fields stay as the JSON page spells them.
    expect(translateMessage("read", "pass next_cursor")).toBe("pass next_cursor");
  });
});

describe("printed command lines", () => {
  const inv: Invocation = {
    command: "search",
    args: {},
    rootDirs: ["/data/with space"],
    outputFlags: ["--raw"],
    absolutePaths: true,
  };

  it("quote any word so that a POSIX shell reads it back unchanged", () => {
    fc.assert(
      fc.property(fc.string(), (word) => {
        const quoted = shellQuote(word);
        // Inside single quotes nothing is special; a quote is closed, escaped and reopened.
        if (quoted.startsWith("'")) {
          expect(quoted.slice(1, -1).replaceAll("'\\''", "'")).toBe(word);
        } else {
          expect(quoted).toBe(word);
          expect(word).toMatch(/^[\w@%+=:,./-]+$/);
        }
      }),
    );
  });

  it("a continuation names the cursor, the page shape and the roots, not the query again", () => {
    const line = commandLine(
      { ...inv, args: { pattern: "x", path: "/data", limit: 5 } },
      { cursor: "CUR", limit: 5, max_tokens: undefined },
    );
    expect(line).toBe("pagewise search --cursor CUR --limit 5 --root '/data/with space' --raw");
  });

  it("switches that set false are spelled by their own flag", () => {
    const line = commandLine(inv, {
      pattern: "x",
      respect_gitignore: false,
      case_sensitive: false,
    });
    expect(line).toContain("--no-respect-gitignore");
    expect(line).toContain("--ignore-case");
  });
});

describe("progress on a terminal", () => {
  function fakeStream() {
    const writes: string[] = [];
    return { stream: { write: (s: string) => writes.push(s) } as never, writes };
  }

  it("stays silent for a scan shorter than a second, then shows the count and erases it", () => {
    let now = 0;
    const { stream, writes } = fakeStream();
    const line = progressLine(stream, "files", () => now);
    for (now = 0; now < 1000; now += 50) line.report(now);
    expect(writes).toEqual([]);
    now = 1000;
    line.report(12_345);
    expect(writes).toEqual(["\rpagewise: 12,345 files scanned…\x1b[K"]);
    now = 1050;
    line.report(12_400); // throttled
    expect(writes.length).toBe(1);
    line.done();
    expect(writes.at(-1)).toBe("\r\x1b[K");
  });

  it("a quick scan leaves nothing to erase", () => {
    const { stream, writes } = fakeStream();
    const line = progressLine(stream, "entries", () => 0);
    line.report(5);
    line.done();
    expect(writes).toEqual([]);
  });
});
