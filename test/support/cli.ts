/**
 * Test support: the `pagewise` command as a person runs it, in two ways. `runCli` runs the CLI's
 * `main` from `src/` in the test's own process, with stdout and stderr captured as pipes would
 * capture them (or stdout as a terminal, `tty`), and the command's environment and working directory set for the
 * call and put back after it: a process start costs more CPU than most commands. `spawnCli` starts
 * `bin/pagewise.js`, for tests whose subject is the process (the exit status it ends with, a
 * server's start). Both give the same `CliRun`; calls of `runCli` must not overlap.
 */
import { spawnSync } from "node:child_process";
import { main } from "../../src/cli/main.js";
import { BIN } from "./server.js";

export interface CliRun {
  stdout: string;
  stderr: string;
  /** The exit status (for `runCli`, what `main` returned: bin/pagewise.js exits with it). */
  status: number | null;
}

export interface CliOptions {
  /** The working directory of the command. */
  cwd: string;
  /** The environment: the test process's own, with these set (undefined: removed). */
  env?: Record<string, string | undefined>;
  /** `runCli`: stdout reads as a terminal (default: a pipe). */
  tty?: boolean;
}

/** `pagewise ARGS` as a child process, from `bin/`. */
export function spawnCli(args: string[], options: CliOptions): CliRun {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: env as NodeJS.ProcessEnv,
    encoding: "utf8",
  });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

/** `pagewise ARGS` in this process: `main` with captured output, `env` and `cwd` for the call. */
export async function runCli(args: string[], options: CliOptions): Promise<CliRun> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const restore = [
    capture(process.stdout, stdout, options.tty === true),
    capture(process.stderr, stderr, false),
    setEnvironment(options.env ?? {}),
    changeDirectory(options.cwd),
  ];
  let status: number;
  try {
    status = await main(args);
  } finally {
    for (const undo of restore.reverse()) undo();
  }
  return {
    stdout: Buffer.concat(stdout).toString("utf8"),
    stderr: Buffer.concat(stderr).toString("utf8"),
    status,
  };
}

/** Sets an own property of `target` for a while; the returned function puts back what was there. */
function shadow(target: object, key: string, value: unknown): () => void {
  const own = Object.getOwnPropertyDescriptor(target, key);
  Object.defineProperty(target, key, { value, configurable: true, writable: true });
  return () => {
    if (own) Object.defineProperty(target, key, own);
    else Reflect.deleteProperty(target, key);
  };
}

/** What `stream` is written goes to `chunks`; the stream reads as a pipe, or as a terminal. */
function capture(stream: NodeJS.WriteStream, chunks: Buffer[], tty: boolean): () => void {
  const write = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const encoding = typeof rest[0] === "string" ? (rest[0] as BufferEncoding) : "utf8";
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
    const done = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
    done?.();
    return true;
  };
  const undoWrite = shadow(stream, "write", write);
  const undoTty = shadow(stream, "isTTY", tty);
  return () => {
    undoTty();
    undoWrite();
  };
}

function setEnvironment(changes: Record<string, string | undefined>): () => void {
  const before = Object.keys(changes).map((name) => [name, process.env[name]] as const);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  return () => {
    for (const [name, value] of before) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

function changeDirectory(dir: string): () => void {
  const before = process.cwd();
  process.chdir(dir);
  return () => process.chdir(before);
}
