/**
 * @module
 * pagewise as a library: the paging engine other MCP servers use to bound their own results.
 *
 * - `pageItems` — budgeted pages over any item list, newest-first (`direction: "backward"`) or
 *   oldest-first, at least one item per page, long items clamped with a continuation offset.
 * - `pageText` — budgeted pages over one long text (a clamped item's remainder, a document).
 * - `CursorCodec` with `ByteWriter`/`ByteReader` — short, signed, self-contained cursors.
 * - `createEstimator` / `defaultEstimator` — the token estimators every budget is checked with.
 * - `PagewiseError` — the error type, with the contract's codes (`BUDGET_TOO_SMALL`, …).
 *
 * ```ts
 * import { defaultEstimator, pageItems } from "pagewise";
 *
 * const page = pageItems({
 *   total: messages.length,
 *   at: (i) => messages[i],
 *   direction: "backward", // newest items that fit, returned oldest first
 *   maxTokens: 4000,
 *   estimator: defaultEstimator,
 *   textOf: (m) => m.body,
 *   maxUnitsPerItem: 1000,
 *   render: (view) => JSON.stringify({ items: view.items.map((p) => ({ ...p.item, body: p.text })) }),
 * });
 * ```
 *
 * See docs/library.md for the whole API and examples/timeline-server for a runnable MCP server.
 */

// Embedding the pagewise server itself: its tools over stdio
// (`serveStdio(() => createMcpServer(engine, caller))` from `@modelcontextprotocol/server/stdio`)
// or HTTP, with a verifier of your own (an OAuth introspection or JWT check in place of the auth
// file; see docs/http.md). `textResult` builds a tool result; a tool of your own declares the
// largest result it returns on its `tools/list` entry, `_meta: {[MAX_RESULT_SIZE_META_KEY]:
// maxResultSizeChars(maxTokens, estimator)}`, so that Claude Code shows it (docs/clients.md).
export {
  AuthFileVerifier,
  type Caller,
  type Identity,
  Roots,
  type TokenVerifier,
} from "./access/index.js";
export * from "./core/index.js";
export {
  type CallerResolver,
  createEngine,
  createMcpServer,
  type Engine,
  type HttpServerHandle,
  type HttpServerOptions,
  MAX_RESULT_SIZE_META_KEY,
  maxResultSizeChars,
  runHttpServer,
  startHttpServer,
  textResult,
} from "./mcp/index.js";
