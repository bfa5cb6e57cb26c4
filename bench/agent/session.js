/**
 * @module
 * One task on one server: start the server behind the official SDK client, run the task's call
 * sequence for that server, measure every result, and never let a failure escape (a tool error, a
 * crash, a timeout or a wrong answer becomes a failed task in the results).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { claudeCodeVerdict, countTokens, measureRaw, shownText } from "./measure.js";
import { MeasuredStdioTransport } from "./transport.js";

/** Messages larger than this are measured raw instead of parsed (see transport.js). */
export const PARSE_LIMIT_BYTES = 32 * 1024 * 1024;
/** One call may take this long before it counts as failed. */
export const CALL_TIMEOUT_MS = 300_000;
const CONNECT_TIMEOUT_MS = 60_000;

let clockTicksPerSecond;
function ticksPerSecond() {
  if (clockTicksPerSecond === undefined) {
    try {
      clockTicksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
    } catch {
      clockTicksPerSecond = 100;
    }
  }
  return clockTicksPerSecond;
}

/**
 * CPU time used by a live process, in ms: its threads' time on CPU (`schedstat`, ns) plus the
 * user and system time of its children that have exited and been waited for (`cutime`, `cstime`
 * of `/proc/<pid>/stat`): DesktopCommander's searches run in ripgrep child processes.
 */
export function processCpuMs(pid) {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread exited meanwhile
      }
    }
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const childTicks = Number(fields[13]) + Number(fields[14]);
    return ns / 1e6 + (childTicks * 1000) / ticksPerSecond();
  } catch {
    return Number.NaN;
  }
}

/** A short, readable form of call arguments for the report (long strings cut). */
function summarizeArgs(args) {
  const out = {};
  for (const [k, v] of Object.entries(args ?? {})) {
    if (typeof v === "string" && v.length > 60) out[k] = `${v.slice(0, 24)}…(${v.length})`;
    else out[k] = v;
  }
  return out;
}

/** Measures one result: the shown text's size, tokens, and Claude Code's verdict. */
function measureResult(result, last, declaredChars) {
  if (last?.raw) {
    const m = measureRaw(last.raw);
    return {
      text: "",
      chars: m.chars,
      o200k: m.o200k,
      claude: m.claude,
      estimated: true,
      oversized: true,
      verdict: claudeCodeVerdict(m.chars, m.claude, declaredChars),
    };
  }
  const shown = shownText(result);
  const tokens = countTokens(shown);
  return {
    chars: shown.length,
    ...tokens,
    oversized: false,
    verdict: claudeCodeVerdict(shown.length, tokens.claude, declaredChars),
  };
}

/**
 * What a strategy is given: `call(tool, args)` returns `{ isError, text, json, raw, verdict }`
 * (`text`: the text blocks joined; `json`: `text` parsed when it is JSON; `raw`: the message's
 * bytes when it was too large to parse, with `text` empty), and `think(ms)`: a pause between
 * calls, as an agent's turn takes, not counted in the wall time.
 */
class AgentSession {
  calls = [];
  thinkMs = 0;
  #client;
  #transport;
  #declared;
  constructor(client, transport, declared) {
    this.#client = client;
    this.#transport = transport;
    this.#declared = declared;
  }

  async call(tool, args) {
    const t0 = performance.now();
    let result;
    let failure;
    try {
      result = await this.#client.callTool(
        { name: tool, arguments: args },
        { timeout: CALL_TIMEOUT_MS },
      );
    } catch (err) {
      failure = err;
    }
    const ms = performance.now() - t0;
    if (failure) {
      this.calls.push({ tool, args: summarizeArgs(args), ms, failed: String(failure.message) });
      throw new Error(`${tool} failed: ${failure.message}`);
    }
    const last = this.#transport.lastResponse();
    const measured = measureResult(result, last, this.#declared.get(tool));
    const isError = result.isError === true;
    this.calls.push({
      tool,
      args: summarizeArgs(args),
      ms,
      bytes: last?.bytes ?? Number.NaN,
      chars: measured.chars,
      o200k: measured.o200k,
      claude: measured.claude,
      estimated: measured.estimated,
      oversized: measured.oversized,
      verdict: measured.verdict,
      isError,
    });
    const text = (result.content ?? [])
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("\n");
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { isError, text, json, raw: last?.raw, verdict: measured.verdict };
  }

  async think(ms) {
    this.thinkMs += ms;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/**
 * Runs `strategy(session, context)` against a fresh server; returns the measured record. Never
 * throws: every failure is recorded in `error`.
 */
export async function runTask({ server, root, strategy, context, check }) {
  const record = {
    server: server.id,
    calls: [],
    answer: undefined,
    correct: false,
    error: undefined,
    note: undefined,
    cpuMs: Number.NaN,
    wallMs: Number.NaN,
    startupMs: Number.NaN,
  };
  const spec = server.command(root);
  const transport = new MeasuredStdioTransport({
    ...spec,
    env: spec.env ?? process.env,
    parseLimitBytes: PARSE_LIMIT_BYTES,
  });
  const client = new Client({ name: "pagewise-agent-bench", version: "1.0.0" });
  let session;
  try {
    const t0 = performance.now();
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    const { tools } = await client.listTools();
    record.startupMs = performance.now() - t0;
    const declared = new Map(
      tools.map((t) => [t.name, t._meta?.["anthropic/maxResultSizeChars"] ?? undefined]),
    );
    record.declaredChars = Object.fromEntries([...declared].filter(([, v]) => v !== undefined));
    if (server.prepare) await server.prepare(client, root);
    session = new AgentSession(client, transport, declared);
    const cpu0 = processCpuMs(transport.pid);
    try {
      const outcome = (await strategy(session, context)) ?? {};
      record.answer = outcome.answer;
      record.note = outcome.note;
      record.correct = outcome.answer !== undefined && check(outcome.answer, context.facts);
    } finally {
      record.cpuMs = processCpuMs(transport.pid) - cpu0;
    }
  } catch (err) {
    record.error = String(err?.message ?? err).slice(0, 500);
  } finally {
    if (session) {
      record.calls = session.calls;
      record.thinkMs = session.thinkMs;
    }
    record.wallMs = record.calls.reduce((sum, c) => sum + c.ms, 0);
    record.stderrTail = transport.stderr().slice(-1000);
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
  }
  return record;
}
