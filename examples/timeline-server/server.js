#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
/**
 * A small MCP server of its own that uses pagewise as a library to bound its results.
 *
 * It holds a timeline of 3,589 events in memory — each with ~600 characters of metadata and a body,
 * some bodies very long — and offers two tools:
 *
 * - `timeline_read {before?, max_tokens?, limit?, max_chars_per_item?}`: the newest events that fit
 *   the budget, oldest first, with `earlier_cursor` to page back. At least one event per page; a
 *   body longer than `max_chars_per_item` (or than the whole budget) is clamped and gets a
 *   `body_cursor`.
 * - `timeline_body {cursor, max_tokens?}`: the rest of a clamped body, in budgeted pages.
 *
 * Run: `npm run build && node examples/timeline-server/server.js` (MCP over stdio, protocol
 * 2026-07-28 or 2025-11-25, whichever the client opens with). Set PAGEWISE_CURSOR_KEY to keep
 * cursors valid across restarts.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import {
  ByteWriter,
  CursorCodec,
  cursorKeyFromSecret,
  defaultEstimator,
  ephemeralCursorKey,
  isPagewiseError,
  PagewiseError,
  pageItems,
  pageText,
  textResult,
} from "pagewise";
import { z } from "zod";

export const TIMELINE_SIZE = 3589;
const DEFAULT_MAX_TOKENS = 4000;
const KIND_EARLIER = 1;
const KIND_BODY = 2;

/** A deterministic timeline: event i, oldest first. */
export function makeTimeline(size = TIMELINE_SIZE) {
  const events = [];
  for (let i = 0; i < size; i++) {
    const long = i % 97 === 13;
    events.push({
      id: `evt_${String(i).padStart(6, "0")}`,
      at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      author: {
        id: `user_${i % 41}`,
        name: `Person ${i % 41}`,
        role: i % 7 === 0 ? "admin" : "member",
      },
      channel: {
        id: `ch_${i % 9}`,
        name: `channel-${i % 9}`,
        topic: "Release planning and incident follow-ups",
      },
      labels: ["timeline", `shard-${i % 5}`, i % 3 === 0 ? "important" : "routine"],
      reactions: [
        { emoji: "👍", count: i % 4 },
        { emoji: "🎉", count: i % 3 },
      ],
      permalink: `https://chat.example.com/archives/ch_${i % 9}/p${1767225600000 + i * 60_000}`,
      source: "import/chat-export-2026-01",
      thread: { parent: i > 0 ? `evt_${String(i - 1).padStart(6, "0")}` : null, depth: i % 4 },
      audit: {
        client: "web/4.18.2 (linux; x86_64)",
        ip_hash: `h${(i * 2654435761) % 4294967296}`,
        trace: `trace-${i.toString(16).padStart(8, "0")}-${"ab".repeat(12)}`,
        edited: i % 11 === 0,
        delivered_to: 12 + (i % 30),
      },
      body: long
        ? `Event ${i}: long report. ${"Details of the incident, the timeline of actions and the follow-ups. ".repeat(80)}End of report ${i}.`
        : `Event ${i}: status update number ${i} — everything nominal.`,
    });
  }
  return events;
}

function fail(code, message) {
  return new PagewiseError(code, message);
}

export function createTimelineServer({ events = makeTimeline(), key } = {}) {
  const secret = key ?? process.env.PAGEWISE_CURSOR_KEY;
  const codec = new CursorCodec({
    key: secret ? cursorKeyFromSecret(secret) : ephemeralCursorKey(),
  });
  const estimator = defaultEstimator;
  const IDENTITY = "timeline-example";

  const encode = (kind, a, b = 0) =>
    codec.encode("timeline", IDENTITY, new ByteWriter().u8(kind).uint(a).uint(b).finish());
  const decode = (cursor, kind) => {
    const r = codec.decode("timeline", IDENTITY, cursor);
    if (r.u8() !== kind) throw fail("INVALID_CURSOR", "This cursor belongs to the other tool.");
    const a = r.uint();
    const b = r.uint();
    r.end();
    return [a, b];
  };

  const server = new McpServer({ name: "timeline-example", version: "0.1.0" });
  // One text block per result (an error too, with isError).
  const asResult = (fn) => async (args) => {
    try {
      return textResult(fn(args), false);
    } catch (err) {
      const error = isPagewiseError(err) ? err : fail("INTERNAL_ERROR", String(err));
      return textResult(JSON.stringify(error.toJSON()), true);
    }
  };

  server.registerTool(
    "timeline_read",
    {
      title: "Read the timeline, newest first",
      description:
        "Returns {items, has_earlier, earlier_cursor, total}: the newest events that fit max_tokens, oldest first. Pass earlier_cursor as before to page back. A clamped body has truncated: true and a body_cursor for timeline_body.",
      inputSchema: z.object({
        before: z.string().optional().describe("earlier_cursor from a previous page."),
        max_tokens: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`Token budget (default ${DEFAULT_MAX_TOKENS}).`),
        limit: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .describe("Most events per page (default 100)."),
        max_chars_per_item: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("Clamp bodies to this many characters (default 1000)."),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    asResult(({ before, max_tokens, limit, max_chars_per_item }) => {
      const from = before === undefined ? events.length : decode(before, KIND_EARLIER)[0];
      if (from > events.length)
        throw fail("INVALID_CURSOR", "The cursor is past the timeline's end.");
      const page = pageItems({
        total: events.length,
        at: (i) => events[i],
        direction: "backward",
        from,
        maxTokens: max_tokens ?? DEFAULT_MAX_TOKENS,
        estimator,
        limit: limit ?? 100,
        textOf: (e) => e.body,
        maxUnitsPerItem: max_chars_per_item ?? 1000,
        render: (view) =>
          JSON.stringify({
            items: view.items.map((p) => ({
              ...p.item,
              body: p.text,
              ...(p.truncated
                ? { truncated: true, body_cursor: encode(KIND_BODY, p.index, p.text.length) }
                : {}),
            })),
            has_earlier: view.hasBefore,
            earlier_cursor: view.hasBefore ? encode(KIND_EARLIER, view.start) : null,
            total: events.length,
          }),
      });
      return page.text;
    }),
  );

  server.registerTool(
    "timeline_body",
    {
      title: "Read the rest of a clamped body",
      description:
        "Returns {id, content, has_more, next_cursor}: the next piece of a body from a body_cursor. Pass next_cursor to continue.",
      inputSchema: z.object({
        cursor: z
          .string()
          .describe("body_cursor from timeline_read, or next_cursor from timeline_body."),
        max_tokens: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`Token budget (default ${DEFAULT_MAX_TOKENS}).`),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    asResult(({ cursor, max_tokens }) => {
      const [index, offset] = decode(cursor, KIND_BODY);
      const event = events[index];
      if (!event || offset > event.body.length)
        throw fail("INVALID_CURSOR", "The cursor names no body.");
      return pageText({
        text: event.body,
        offset,
        maxTokens: max_tokens ?? DEFAULT_MAX_TOKENS,
        estimator,
        render: (view) =>
          JSON.stringify({
            id: event.id,
            content: view.content,
            has_more: view.hasMore,
            next_cursor: view.hasMore ? encode(KIND_BODY, index, view.end) : null,
          }),
      }).text;
    }),
  );
  return server;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // One timeline and one cursor key for the process; the SDK builds a server per connection.
  const events = makeTimeline();
  const key = process.env.PAGEWISE_CURSOR_KEY ?? randomBytes(32).toString("hex");
  serveStdio(() => createTimelineServer({ events, key }));
  process.stderr.write(`timeline example serving ${TIMELINE_SIZE} events on stdio\n`);
}
