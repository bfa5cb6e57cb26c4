/**
 * @module
 * Defaults and hard limits in one place. Names carry their unit.
 */

/** Budget applied when a tool is called without `max_tokens` (except `read` in line mode). */
export const DEFAULT_MAX_TOKENS = 8000;
/**
 * Largest budget honoured; a larger request is lowered to this and the page says so. 25,000 is the
 * largest tool result Claude Code accepts by default (`MAX_MCP_OUTPUT_TOKENS`).
 */
export const DEFAULT_MAX_TOKENS_CAP = 25_000;
/** Ceiling of `read` in line mode, in estimated tokens of the returned text. */
export const DEFAULT_MAX_READ_TOKENS = 25_000;
/** Shortest cursor key accepted, in bytes: 128 bits, so the key that signs cursors is not guessable. */
export const MIN_CURSOR_KEY_BYTES = 16;
/** How long a cursor stays valid, in hours. */
export const DEFAULT_CURSOR_TTL_HOURS = 24 * 7;
/** Bytes read per system call when streaming a file (hashing, scanning lines). */
export const STREAM_CHUNK_BYTES = 1 << 20;
/**
 * A file whose mtime or ctime is this close to the moment it was hashed cannot be trusted to be
 * unchanged just because its metadata is unchanged (timestamps are coarse; a write in the same
 * tick leaves them equal). Such a file is re-hashed on the next call ("racily clean", as in git).
 */
export const RACY_WINDOW_NS = 2_000_000_000n;
/** Entries kept in the per-process version cache. */
export const VERSION_CACHE_ENTRIES = 4096;
