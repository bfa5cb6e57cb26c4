/**
 * The library example end to end: examples/timeline-server is an MCP server of its own that pages
 * a 3,589-event in-memory timeline with pagewise's pageItems/pageText. Driven over stdio with the
 * SDK client: the first page holds the newest events that fit, walking back returns every event
 * once in order, clamped bodies read back exactly, and every page fits its budget.
 */
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultEstimator } from "../dist/index.js";
import { makeTimeline, TIMELINE_SIZE } from "../examples/timeline-server/server.js";
import { InPlaceProbeStdioClientTransport, REPO, sdkClient } from "./support/server.js";

describe("examples/timeline-server over stdio", () => {
  let client: Client;
  const events = makeTimeline();

  beforeAll(async () => {
    // The server/discover probe on the example's own process (no sibling process started first).
    const transport = new InPlaceProbeStdioClientTransport({
      command: process.execPath,
      args: [path.join(REPO, "examples/timeline-server/server.js")],
      stderr: "pipe",
    });
    client = sdkClient("2026-07-28");
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  });
  afterAll(async () => {
    await client?.close();
  });

  async function call(name: string, args: Record<string, unknown>) {
    const result = (await client.callTool({ name, arguments: args })) as {
      content: Array<{ text: string }>;
      isError?: boolean;
    };
    return {
      text: result.content[0]!.text,
      json: JSON.parse(result.content[0]!.text),
      isError: result.isError === true,
    };
  }

  async function body(cursor: string, maxTokens: number): Promise<string> {
    let out = "";
    let next: string | null = cursor;
    while (next) {
      const page = await call("timeline_body", { cursor: next, max_tokens: maxTokens });
      expect(page.isError).toBe(false);
      expect(defaultEstimator.count(page.text)).toBeLessThanOrEqual(maxTokens);
      out += page.json.content;
      next = page.json.next_cursor;
    }
    return out;
  }

  it("the first page holds the newest events that fit, oldest first, within budget", async () => {
    expect(events.length).toBe(TIMELINE_SIZE);
    const page = await call("timeline_read", { max_tokens: 4000, limit: 100 });
    expect(page.isError).toBe(false);
    expect(defaultEstimator.count(page.text)).toBeLessThanOrEqual(4000);
    const ids = page.json.items.map((e: { id: string }) => e.id);
    expect(ids.at(-1)).toBe(events.at(-1)!.id);
    expect(ids).toEqual(events.slice(-ids.length).map((e) => e.id));
    expect(ids.length).toBeGreaterThan(3);
    expect(page.json.has_earlier).toBe(true);
  });

  it("walking back returns every event once, in order; clamped bodies read back exactly", async () => {
    const maxTokens = 6000;
    const seen: Array<{ id: string; body: string }> = [];
    let page = await call("timeline_read", {
      max_tokens: maxTokens,
      limit: 100,
      max_chars_per_item: 300,
    });
    let pages = 0;
    for (;;) {
      expect(page.isError).toBe(false);
      expect(defaultEstimator.count(page.text)).toBeLessThanOrEqual(maxTokens);
      expect(page.json.items.length).toBeGreaterThan(0);
      const got = [];
      for (const e of page.json.items) {
        got.push({
          id: e.id,
          body: e.truncated ? e.body + (await body(e.body_cursor, 500)) : e.body,
        });
      }
      seen.unshift(...got);
      pages++;
      if (!page.json.has_earlier) break;
      page = await call("timeline_read", {
        before: page.json.earlier_cursor,
        max_tokens: maxTokens,
        limit: 100,
        max_chars_per_item: 300,
      });
    }
    expect(seen).toEqual(events.map((e) => ({ id: e.id, body: e.body })));
    expect(pages).toBeGreaterThan(100);
  });

  it("a budget smaller than one event's metadata is BUDGET_TOO_SMALL with the budget that works", async () => {
    const page = await call("timeline_read", { max_tokens: 50 });
    expect(page.isError).toBe(true);
    expect(page.json.error.code).toBe("BUDGET_TOO_SMALL");
    const retry = await call("timeline_read", { max_tokens: page.json.error.minimum_max_tokens });
    expect(retry.isError).toBe(false);
    expect(retry.json.items.length).toBe(1);
  });
});
