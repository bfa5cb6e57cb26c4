/**
 * The MCP surface end to end over stdio, with clients no one here wrote: the SDK v2 client on
 * 2026-07-28 (no `initialize`) and on the 2025 handshake, and the v1 SDK client. What every client
 * must see the same: the tool list (deterministic, JSON Schema 2020-12, integer bounds), one text
 * block per result, structured errors for bad arguments (huge numbers, unknown keys), the default
 * cap of 25,000 tokens, each tool's result-size declaration, a tools/list within its token
 * budget, and the shared rules and roots in the instructions.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEstimator, ERROR_CODES } from "../dist/core/index.js";
import { BIN, type ServerHandle, startServer, tempDir } from "./support/server.js";

const TOOL_ORDER = ["read", "list", "search", "tail", "json_open", "json_read", "json_close"];

let modern: ServerHandle;
let legacy: ServerHandle;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("pagewise-protocol-"));
  // ~1 MB of plain ASCII lines: a 25,000-token page of it is far over 50,000 characters.
  writeFileSync(
    path.join(dir, "big.txt"),
    Array.from({ length: 20_000 }, (_, i) => `line ${i} of the big file, plain words\n`).join(""),
  );
  writeFileSync(path.join(dir, "app.log"), "one\ntwo\nthree\n");
  [modern, legacy] = await Promise.all([
    // The SDK's default flow, as agents run it: the probe on a sibling process, then the session.
    startServer(["--root", dir], {}, "2026-07-28", "sibling"),
    startServer(["--root", dir], {}, "legacy"),
  ]);
});

afterAll(async () => {
  await Promise.all([modern?.close(), legacy?.close()]);
  cleanup?.();
});

describe("protocol versions", () => {
  it("gives a v2 client that pins 2026-07-28 that revision, without initialize", () => {
    expect(modern.client.getProtocolEra()).toBe("modern");
    expect(modern.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(modern.client.getServerVersion()?.name).toBe("pagewise");
  });

  it("gives a v2 client on the 2025 handshake 2025-11-25", () => {
    expect(legacy.client.getProtocolEra()).toBe("legacy");
    expect(legacy.client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
  });

  it("keeps serving the v1 SDK client (2025-11-25)", async () => {
    {
      const client = new V1Client({ name: "pagewise-v1-test", version: "0.0.0" });
      const transport = new V1StdioClientTransport({
        command: process.execPath,
        args: [BIN, "serve", "--root", dir],
        stderr: "ignore",
      });
      // The v1 client keeps the negotiated version to itself: read it off the initialize answer.
      let negotiated: unknown;
      const start = transport.start.bind(transport);
      transport.start = async () => {
        const deliver = transport.onmessage;
        transport.onmessage = (message) => {
          negotiated ??= (message as { result?: { protocolVersion?: unknown } }).result
            ?.protocolVersion;
          deliver?.(message);
        };
        return start();
      };
      await client.connect(transport);
      try {
        expect(negotiated).toBe("2025-11-25");
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(TOOL_ORDER);
        const result = (await client.callTool({
          name: "read",
          arguments: { path: "app.log", max_tokens: 500 },
        })) as { content: Array<{ text: string }> };
        expect(JSON.parse(result.content[0]!.text).content).toBe("one\ntwo\nthree\n");
      } finally {
        await client.close();
      }
    }
  });
});

describe("tools/list", () => {
  it("is the same, in the same order, on both eras and on every call", async () => {
    const lists = await Promise.all(
      [modern, legacy, modern].map(async (s) => (await s.client.listTools()).tools),
    );
    expect(lists[0]!.map((t) => t.name)).toEqual(TOOL_ORDER);
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
  });

  it("validates as JSON Schema 2020-12, with bounds on every integer argument", async () => {
    const { tools } = await modern.client.listTools();
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    let integers = 0;
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(ajv.validateSchema(tool.inputSchema), `${tool.name}: ${ajv.errorsText()}`).toBe(true);
      ajv.compile(tool.inputSchema);
      const properties = tool.inputSchema.properties as Record<string, Record<string, unknown>>;
      for (const [name, property] of Object.entries(properties)) {
        expect(property.type, `${tool.name}.${name}`).not.toBe("number");
        if (property.type !== "integer") continue;
        integers++;
        expect(typeof property.minimum, `${tool.name}.${name}`).toBe("number");
        expect(property.maximum, `${tool.name}.${name}`).toBeLessThanOrEqual(
          Number.MAX_SAFE_INTEGER,
        );
      }
      // Claude Code keeps the first 2,048 characters of a description.
      expect(tool.description!.length, tool.name).toBeLessThanOrEqual(2048);
    }
    expect(integers).toBeGreaterThanOrEqual(12);
    const search = tools.find((t) => t.name === "search")!;
    expect((search.inputSchema.properties as any).context).toMatchObject({
      type: "integer",
      minimum: 0,
      maximum: 10,
    });
  });
});

describe("arguments out of bounds", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["read", { path: "big.txt", max_tokens: 200, limit: 1e21 }, "limit"],
    ["read", { path: "big.txt", max_tokens: 200, offset: 2 ** 53 + 2 }, "offset"],
    ["read", { path: "big.txt", max_tokens: 1e308 }, "max_tokens"],
    ["search", { pattern: "line", max_chars_per_match: 1e21, limit: 1 }, "max_chars_per_match"],
    ["search", { pattern: "line", context: 11 }, "context"],
    ["tail", { path: "app.log", limit: 0 }, "limit"],
    ["list", { offset: -1 }, "offset"],
  ];
  it.each(cases)("%s %j is INVALID_ARGUMENT naming the limit", async (tool, args, name) => {
    for (const server of [modern, legacy]) {
      const page = await server.call(tool, args);
      expect(page.isError).toBe(true);
      expect(page.blocks).toBe(1);
      expect(page.json.error.code).toBe("INVALID_ARGUMENT");
      expect(page.json.error.message).toContain(name);
      expect(page.json.error.limit).toMatchObject({ name, value: args[name] });
    }
  });

  it("refuses fractions and strings as whole numbers, with the structured error", async () => {
    for (const max_tokens of [1500.5, "100"]) {
      const page = await modern.call("read", { path: "big.txt", max_tokens });
      expect(page.json.error.code).toBe("INVALID_ARGUMENT");
      expect(page.json.error.message).toContain("max_tokens: must be a whole number");
    }
  });

  it("takes tail's cursors as cursor, and says what to pass for a key it does not take", async () => {
    const first = await modern.call("tail", { path: "big.txt", max_tokens: 300 });
    expect(first.json.next_cursor).toBeTypeOf("string");
    const next = await modern.call("tail", { cursor: first.json.next_cursor });
    expect(next.isError, next.text).toBe(false);
    const both = await modern.call("tail", { cursor: "abc", before: "abc" });
    expect(both.json.error.code).toBe("INVALID_ARGUMENT");
    const other = await modern.call("read", { file: "app.log" });
    expect(other.json.error.message).toContain('"path"');
  });
});

describe("results that fit real clients", () => {
  it("declares on each tool the characters a page at the cap may take, and lists tools in under 2,500 o200k tokens", async () => {
    const { tools } = await modern.client.listTools();
    for (const tool of tools) {
      // The default estimator covers at most 8 characters per token: 25,000 × 8.
      expect(tool._meta?.["anthropic/maxResultSizeChars"], tool.name).toBe(200_000);
    }
    expect(encode(JSON.stringify({ tools })).length).toBeLessThanOrEqual(2500);
  });

  it("lowers max_tokens 100000 to the default cap of 25000, says so, and fits the declared size", async () => {
    const estimator = await createEstimator("default");
    for (const server of [modern, legacy]) {
      const result = (await server.client.callTool({
        name: "read",
        arguments: { path: "big.txt", max_tokens: 100_000 },
      })) as { content: Array<{ text: string }>; _meta?: Record<string, unknown> };
      expect(result.content).toHaveLength(1);
      const text = result.content[0]!.text;
      const page = JSON.parse(text);
      expect(page.max_tokens).toBe(25_000);
      expect(estimator.count(text)).toBeLessThanOrEqual(25_000);
      expect(text.length).toBeGreaterThan(50_000);
      expect(text.length).toBeLessThanOrEqual(200_000);
      expect(result._meta?.["anthropic/maxResultSizeChars"]).toBeUndefined();
    }
  });

  it("keeps a page at the default budget under 50,000 characters, where no declaration is honoured", async () => {
    const estimator = await createEstimator("default");
    for (const [tool, args] of [
      ["search", { pattern: "line", path: "big.txt", limit: 1000 }],
      ["tail", { path: "big.txt", limit: 1000 }],
    ] as const) {
      const page = await modern.call(tool, args);
      expect(page.isError, page.text).toBe(false);
      expect(estimator.count(page.text)).toBeLessThanOrEqual(6000);
      expect(page.text.length, tool).toBeGreaterThan(15_000);
      expect(page.text.length, tool).toBeLessThanOrEqual(48_000);
    }
  });
});

describe("instructions", () => {
  it("name the roots the caller may read", () => {
    for (const server of [modern, legacy]) {
      const instructions = server.client.getInstructions() ?? "";
      expect(instructions).toContain(dir);
      expect(instructions).toContain("6000");
      expect(instructions).toContain("25000");
      expect(instructions).toContain("next_cursor");
      // What each error code asks for, said once; the rules fit before Claude Code's 2,048-character cut.
      for (const code of ERROR_CODES) expect(instructions).toContain(`${code}:`);
      expect(instructions.indexOf(dir)).toBeLessThan(instructions.length);
      expect(instructions.length - dir.length).toBeLessThanOrEqual(2048);
    }
  });
});
