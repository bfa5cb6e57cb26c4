/**
 * @module
 * Defaults and hard limits in one place. Names carry their unit.
 */

/**
 * Budget applied when a tool is called without `max_tokens` (except `read` in line mode). Chosen
 * so that a default page shows inline in every client whatever it holds: the `default` estimator
 * charges at least 1/8 token per UTF-16 unit, so a page of 6,000 tokens is at most 48,000
 * characters, under Claude Code's 50,000-character threshold above which a result is saved to a
 * file (the one that applies where a tool's `_meta["anthropic/maxResultSizeChars"]` is not
 * honoured, as in Claude Desktop's code agent), and under the 12,500 rough tokens (characters / 4)
 * above which Claude Code counts a result against `MAX_MCP_OUTPUT_TOKENS` at all. docs/clients.md
 * has the sources.
 */
export const DEFAULT_MAX_TOKENS = 6000;
/**
 * Largest budget honoured; a larger request is lowered to this and the page says so. 25,000 is
 * Claude Code's default `MAX_MCP_OUTPUT_TOKENS`. Each tool declares in `tools/list` the characters
 * a page at this cap can take (`maxResultSizeChars` in mcp/limits.ts), which raises Claude Code's
 * character threshold and, for text, replaces its token ceiling with a quarter of that
 * declaration (50,000 tokens at this cap), so a page at the cap shows inline in the CLI.
 */
export const DEFAULT_MAX_TOKENS_CAP = 25_000;
/** Ceiling of `read` in line mode, in estimated tokens of the returned text. */
export const DEFAULT_MAX_READ_TOKENS = 25_000;
/** Shortest cursor key accepted, in bytes: 128 bits, so the key that signs cursors is not guessable. */
export const MIN_CURSOR_KEY_BYTES = 16;
/**
 * Longest cursor, in characters. What a cursor carries is bounded by the sources (a pattern or a
 * query of 8 KiB, a glob of 1 KiB, a path of 4 KiB: about 18,000 characters in all), so a cursor
 * the server makes is always one it accepts; a longer string is refused before it is decoded.
 */
export const MAX_CURSOR_CHARS = 24 * 1024;
/** How long a cursor stays valid, in hours. */
export const DEFAULT_CURSOR_TTL_HOURS = 24 * 7;
/** Bytes read per system call when streaming a file (hashing, scanning lines). */
export const STREAM_CHUNK_BYTES = 1 << 20;
/**
 * A file whose ctime is this close to now cannot be trusted to be unchanged just because its state
 * (size, mtime, ctime) is unchanged: timestamps are coarse, and a write in the same tick as the last
 * one leaves them equal ("racily clean", as in git). This window holds where timestamps may be as
 * coarse as a second or two (a ctime on a whole second: FAT, HFS+, some NFS servers), and for files
 * whose timestamps come from another machine's clock (a network file system: it also absorbs that
 * much clock skew between the server and this machine). docs/versions.md has the argument.
 */
export const RACY_WINDOW_NS = 2_000_000_000n;
/**
 * The racy window of a local file system with sub-second timestamps: they are stamped from the
 * kernel's coarse clock, which advances every tick (1–10 ms; 15.6 ms on Windows servers), so a
 * write more than this after the last one always stamps a later ctime.
 */
export const FINE_RACY_WINDOW_NS = 50_000_000n;
/**
 * How many times a file that is not settled (written within its racy window) is waited for before
 * its first page is refused with CONTENT_CHANGED: a file written continuously never settles.
 */
export const SETTLE_ATTEMPTS = 3;
/** Entries kept in the per-process version cache. */
export const VERSION_CACHE_ENTRIES = 4096;
/**
 * Tokens a page that carries a cursor leaves unused when its call set the budget (a first call, or
 * a continuation passing `max_tokens`), so that the walk can go on at that budget: the smallest page
 * further on can cost a little more than this one's. This much for the page (its first character,
 * numbers that grow), and WALK_RESERVE_TOKENS_PER_CURSOR for each cursor it holds: a cursor's
 * position bytes and MAC change from page to page, and their characters cost more or less.
 */
export const WALK_RESERVE_TOKENS = 8;
/** See WALK_RESERVE_TOKENS. Measured: a cursor of the walks in the conformance suite varies by ±6. */
export const WALK_RESERVE_TOKENS_PER_CURSOR = 8;
