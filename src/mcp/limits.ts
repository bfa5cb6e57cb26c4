/**
 * @module
 * The MCP layer's limits and defaults in one place: what one HTTP replica accepts and how long it
 * waits, and the result sizes clients are told about. Names carry their unit. The CLI's flags
 * (`--max-concurrent-scans`, …) take their defaults from here.
 */

/** Address bound when `--http` names only a port: loopback, so nothing is exposed by accident. */
export const DEFAULT_HTTP_HOST = "127.0.0.1";
/** Tool calls one replica runs at once (`--max-concurrent-scans`): bounds its memory and threads. */
export const DEFAULT_MAX_CONCURRENT_SCANS = 16;
/** How long a tool call may wait for a free slot before RESOURCE_LIMIT_EXCEEDED, in ms. */
export const DEFAULT_SCAN_QUEUE_MS = 10_000;
/** Waiters allowed in the scan queue; beyond this a call fails at once instead of piling up. */
export const MAX_SCAN_QUEUE = 1024;
/** Largest request body accepted, in bytes (`--max-body-bytes`); larger is HTTP 413. */
export const DEFAULT_MAX_BODY_BYTES = 1 << 20;
/** Longest a request may run before its calls are cancelled, in ms (`--request-timeout-ms`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * Least time a slow client gets to send a whole request (headers and body), in ms; otherwise it
 * gets the request timeout (`--request-timeout-ms`, 30 s by default).
 */
export const MIN_REQUEST_RECEIVE_MS = 5000;
/** Most time a client gets to send its headers, in ms: a slow-headers client frees its socket. */
export const MAX_HEADERS_RECEIVE_MS = 20_000;
/**
 * How often the receive deadlines above are checked, in ms (Node's `connectionsCheckingInterval`,
 * 30 s by default, which let a slow client keep its socket up to 30 s past its deadline): a
 * deadline is honoured within this much.
 */
export const RECEIVE_DEADLINE_CHECK_MS = 1000;
/** Shutdown waits this long past the request timeout, in ms, so in-flight requests can answer. */
export const SHUTDOWN_GRACE_EXTRA_MS = 1000;
/**
 * Claude Code saves a tool result longer than this many characters to a file and shows the model a
 * short preview, unless the tool's entry in `tools/list` declares a larger
 * `_meta[MAX_RESULT_SIZE_META_KEY]` (docs/clients.md). The default budget keeps pages under it.
 */
export const CLIENT_PERSIST_THRESHOLD_CHARS = 50_000;
/** The largest `_meta[MAX_RESULT_SIZE_META_KEY]` Claude Code honours, in characters. */
export const MAX_RESULT_SIZE_CHARS = 500_000;
