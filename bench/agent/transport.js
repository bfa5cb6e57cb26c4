/**
 * @module
 * A stdio transport for the official SDK client (`@modelcontextprotocol/client`) that can take what
 * some servers send: tens or hundreds of MB in one message.
 *
 * The SDK's own stdio transport caps a message at 10 MiB and grows its read buffer by concatenating
 * each chunk to it (quadratic: a 20 MiB answer took 47 s, see `/work/shared/notes/peers.md`). This
 * one keeps the chunks of a message in a list and joins them once. A message up to
 * `parseLimitBytes` is parsed and handed to the client unchanged. A larger one is not parsed (a
 * 400 MB message is near V8's largest string): the client gets a stand-in result with empty text,
 * and the raw bytes stay on the transport (`lastResponse().raw`) so the benchmark can still measure
 * the message and search it for the answer. The benchmark's report says which results were taken
 * this way.
 *
 * It also exposes what a benchmark needs from the server process: its pid, its stderr, and the size
 * of every response. Everything else (framing, the JSON-RPC handshake) is the SDK's.
 */
import { spawn } from "node:child_process";

const NEWLINE = 0x0a;
const KiB = 1024;

/** Finds the JSON-RPC id of a message too large to parse from its first and last bytes. */
function idOfRawMessage(buf) {
  const tail = buf.subarray(Math.max(0, buf.length - 256)).toString("latin1");
  const head = buf.subarray(0, 256).toString("latin1");
  const m = tail.match(/"id"\s*:\s*(\d+)\s*\}?\s*$/) ?? head.match(/"id"\s*:\s*(\d+)/);
  return m ? Number(m[1]) : undefined;
}

export class MeasuredStdioTransport {
  onclose;
  onerror;
  onmessage;
  #params;
  #child;
  #chunks = [];
  #pendingBytes = 0;
  #stderr = "";
  #last;
  #closed = false;

  /**
   * @param {{command: string, args: string[], env?: Record<string,string>, cwd?: string,
   *   parseLimitBytes: number}} params
   */
  constructor(params) {
    this.#params = params;
  }

  get pid() {
    return this.#child?.pid;
  }

  /** The server's stderr so far (at most its last 64 KiB). */
  stderr() {
    return this.#stderr;
  }

  /**
   * The last response received: `{ id, bytes, raw? }`; `raw` (a Buffer) only when the message was
   * over the parse limit and the client got a stand-in.
   */
  lastResponse() {
    return this.#last;
  }

  async start() {
    const { command, args, env, cwd } = this.#params;
    this.#child = spawn(command, args, {
      env: env ?? process.env,
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.on("data", (chunk) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-64 * KiB);
    });
    this.#child.stdout.on("data", (chunk) => this.#onData(chunk));
    this.#child.stdin.on("error", (err) => this.onerror?.(err));
    this.#child.on("close", () => {
      this.#closed = true;
      this.onclose?.();
    });
    await new Promise((resolve, reject) => {
      this.#child.once("spawn", resolve);
      this.#child.once("error", reject);
    });
  }

  #onData(chunk) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      const parts = this.#chunks;
      parts.push(piece);
      const length = this.#pendingBytes + piece.length;
      this.#chunks = [];
      this.#pendingBytes = 0;
      this.#deliver(parts.length === 1 ? parts[0] : Buffer.concat(parts, length));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#chunks.push(rest);
      this.#pendingBytes += rest.length;
    }
  }

  #deliver(buf) {
    if (buf.length === 0) return;
    let message;
    if (buf.length <= this.#params.parseLimitBytes) {
      try {
        message = JSON.parse(buf.toString("utf8"));
      } catch (err) {
        // Servers that print logs on stdout: not a message, skip it as the SDK does.
        this.onerror?.(new Error(`unparsable line on stdout: ${err.message}`));
        return;
      }
      if (message.id !== undefined && ("result" in message || "error" in message))
        this.#last = { id: message.id, bytes: buf.length };
    } else {
      const id = idOfRawMessage(buf);
      const tail = buf.subarray(Math.max(0, buf.length - 512)).toString("latin1");
      const structured = buf.includes('"structuredContent":');
      message = {
        jsonrpc: "2.0",
        id,
        result: {
          content: [{ type: "text", text: "" }],
          ...(structured ? { structuredContent: { content: "" } } : {}),
          ...(tail.includes('"isError":true') ? { isError: true } : {}),
        },
      };
      this.#last = { id, bytes: buf.length, raw: buf };
    }
    this.onmessage?.(message);
  }

  async send(message) {
    if (this.#closed || !this.#child) throw new Error("the server process has exited");
    const line = `${JSON.stringify(message)}\n`;
    await new Promise((resolve, reject) => {
      this.#child.stdin.write(line, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Ends stdin, then SIGTERM after 2 s and SIGKILL after 2 s more, as the SDK's transport does. */
  async close() {
    const child = this.#child;
    if (!child || this.#closed) return;
    const closed = new Promise((resolve) => child.once("close", resolve));
    const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());
    try {
      child.stdin.end();
    } catch {
      // already gone
    }
    await Promise.race([closed, wait(2000)]);
    if (!this.#closed) child.kill("SIGTERM");
    await Promise.race([closed, wait(2000)]);
    if (!this.#closed) child.kill("SIGKILL");
    await Promise.race([closed, wait(2000)]);
  }
}
