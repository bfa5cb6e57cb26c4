/**
 * @module
 * The sources layer's limits and defaults in one place: page sizes, what one call may walk, read,
 * compile or keep, and the worker threads behind patterns. Names carry their unit. The engine's
 * own limits are in core/limits.ts (budgets, cursors, versions) and json/limits.ts (the JSON
 * engine); the server's in mcp/limits.ts.
 */
import os from "node:os";

// --- Page sizes: a larger `limit` / `max_items` is lowered to the maximum and the page says so. ---

/** `list` entries per page without `limit`. */
export const DEFAULT_LIST_LIMIT = 100;
/** Largest `list` page: bounds the items one page holds, and fits, whatever the budget. */
export const MAX_LIST_LIMIT = 1000;
/** `search` matches per page without `limit`. */
export const DEFAULT_SEARCH_LIMIT = 100;
/** Largest `search` page: bounds the matches one page keeps and fits. */
export const MAX_SEARCH_LIMIT = 1000;
/** Characters of a long match line shown around the match; the rest is behind its line_cursor. */
export const DEFAULT_MAX_CHARS_PER_MATCH = 400;
/** Most `context` lines before and after a match: more is a read of the file, not a search. */
export const MAX_CONTEXT_LINES = 10;
/** `json_read` matches per page without `max_items`. */
export const DEFAULT_JSON_MAX_ITEMS = 100;
/** Largest `max_items`: bounds the matches one page reads ahead and fits. */
export const MAX_JSON_MAX_ITEMS = 1000;
/** `tail` records per page without `limit`. */
export const TAIL_DEFAULT_LIMIT = 50;
/** Largest `tail` page: bounds the records one page reads back and fits. */
export const TAIL_MAX_LIMIT = 1000;
/** Code units of one record shown without `max_chars_per_item`; the rest is behind line_cursor. */
export const TAIL_DEFAULT_MAX_CHARS_PER_ITEM = 2000;

// --- The directory walk (list, search) and its .gitignore files ---

/** Directory entries one walk may read (`--max-walk-entries`): a bound on one call's work. */
export const DEFAULT_MAX_WALK_ENTRIES = 2_000_000;
/** Directory descriptors a walk keeps open (one per level); deeper levels stat entries by path. */
export const MAX_OPEN_WALK_DIRECTORIES = 64;
/** Directory descriptors search's confined opener keeps (the current path and a few more). */
export const MAX_OPEN_SEARCH_DIRECTORIES = 32;
/** Largest `.gitignore` read, in bytes; a larger one is skipped (and reported). */
export const MAX_GITIGNORE_BYTES = 1 << 20;
/**
 * Rules in force at once for one directory (its own `.gitignore` plus those above it): each entry
 * is tested against every rule in force, ≈ 0.5 µs a short rule (docs/list-search.md).
 */
export const MAX_GITIGNORE_RULES = 1000;
/**
 * Characters of the rules in force at once (their regexes' size): 32 KiB holds ~1,000 rules of
 * real-world length and keeps a test of a long path, and V8's compile of each, to milliseconds.
 */
export const MAX_GITIGNORE_RULE_CHARS = 32 * 1024;
/**
 * `**` per rule: each becomes a nested `(?:/[^/]+)*` group that backtracks as depth^k (3 of them:
 * 29 s on one 2,000-deep path), so a file with a rule of more is skipped.
 */
export const MAX_GITIGNORE_GLOBSTARS_PER_RULE = 2;

// --- Patterns (search, tail's grep, globs) and the worker threads that run them ---

/**
 * Longest pattern (`search`'s, `tail`'s `grep`) or JSON query accepted, in UTF-8 bytes. A cursor
 * carries it, so it bounds what a cursor must carry: at this length the smallest page with its
 * cursor stays well within the default cap (measured: 12,408 tokens for 8 KiB of random letters,
 * the costliest shape; 6,653 for a repeated pair). At 64 KiB it was 79,209, a page no budget the
 * server accepts could hold.
 */
export const MAX_CARRIED_ARGUMENT_BYTES = 8 * 1024;
/**
 * Deepest nesting of groups in a pattern (ripgrep's default nest limit): what reads a pattern
 * recursively (the analysis, the RE2 translation) stays far from the stack's end.
 */
export const MAX_PATTERN_NESTING = 250;
/**
 * Steps per character of text a pattern may cost V8's backtracking engine to run there (the
 * `bounded` engine; analysis.ts computes the bound from the syntax). Past it, the pattern runs on
 * the linear-time engine.
 */
export const MAX_BOUNDED_STEPS_PER_CHAR = 256;
/**
 * Largest program (instructions, as `re2Weight` estimates them) the linear-time engine compiles:
 * compiling costs ~10 µs an instruction, and its automaton can step through the whole program per
 * character. The longest literal accepted (MAX_CARRIED_ARGUMENT_BYTES) fits.
 */
export const MAX_PATTERN_PROGRAM = 100_000;
/** Longest glob accepted, in characters. */
export const MAX_GLOB_CHARS = 1024;
/** Wildcards (`*`) a glob may have when it has to run on the backtracking engine. */
export const MAX_BACKTRACKING_GLOB_WILDCARDS = 3;
/** How long a guarded pattern job may make no progress before it is stopped (`--search-stall-ms`). */
export const DEFAULT_SEARCH_STALL_MS = 5000;
/**
 * A search scan of a `guarded` pattern (only V8's backtracking engine runs it) is stopped after this
 * many stall windows in all, progress or not (30 s at the default `--search-stall-ms`): a pattern
 * that backtracks for a second on every line makes progress, so the stall guard alone would let it
 * hold its thread for as long as the tree lasts.
 */
export const GUARDED_SCAN_STALL_WINDOWS = 6;
/**
 * How long a `list` walk may make no progress before it is stopped: a directory read that does not
 * return for this long is a file system that does not answer, not a slow tree.
 */
export const LIST_STALL_MS = 30_000;
/**
 * Worker threads one caller's calls run at once: one per core (2 to 4). Each costs tens of MiB, so
 * a flood of calls queues for threads instead of starting one each, and memory stays bounded.
 */
export const MAX_LIVE_WORKERS = Math.max(2, Math.min(os.availableParallelism(), 4));
/**
 * Threads (and searches in progress) kept beyond MAX_LIVE_WORKERS for the other callers (over HTTP,
 * other identities): whatever one caller runs, another caller's call starts at once. With one
 * caller (stdio) they are never started.
 */
export const SLOTS_KEPT_FOR_OTHER_CALLERS = 1;
/**
 * Worker threads that scans of a pattern only V8's backtracking engine runs (`guarded`) may hold at
 * once, per caller (an identity over HTTP; every call over stdio): half of MAX_LIVE_WORKERS,
 * rounded up and below it. Such a scan can spend seconds on one line, so the rest stays free: the
 * caller's other searches and every other caller's start at once, whatever patterns one caller
 * runs. A caller's guarded searches beyond this many wait for one another, not for the others.
 */
export const MAX_GUARDED_SEARCH_THREADS = Math.max(
  1,
  Math.min(MAX_LIVE_WORKERS - 1, Math.ceil(MAX_LIVE_WORKERS / 2)),
);
/** Young generation of a worker thread, in MiB: V8's default is several times larger. */
export const WORKER_YOUNG_GENERATION_MB = 4;
/**
 * Heap a worker thread may hold, in MiB. A walk through a directory of `max_walk_entries` names, or
 * a search holding its longest line, fits well within it; past it the call ends with
 * RESOURCE_LIMIT_EXCEEDED instead of growing the process (V8's default is the process's own limit,
 * per thread).
 */
export const WORKER_HEAP_MB = 1024;
/** Most threads one search scan is sharded over. */
export const MAX_SCAN_SHARDS = 4;
/** A search window reaching past this many matches runs in one thread (shards keep it whole). */
export const MAX_SHARDED_WINDOW = 5000;

// --- What one call reads and keeps ---

/** Bytes a search reads per system call. */
export const SEARCH_CHUNK_BYTES = 1 << 20;
/**
 * Longest line a search holds whole: a line is held to match a pattern whose matches can be
 * long (`a.*b`), or with `context`. A file with a longer line is skipped (`skipped.long_lines`)
 * once this much of the line is read, never holding more. Lines of any length are matched a
 * window at a time when every match is short (literals, most bounded patterns; context 0).
 */
export const MAX_SEARCH_LINE_BYTES = 4 << 20;
/** NUL in this many leading bytes marks a file binary (like git and ripgrep). */
export const BINARY_SNIFF_BYTES = 8192;
/** Bytes `tail` reads per block, backwards from the end. */
export const TAIL_BLOCK_BYTES = 64 * 1024;
/** Blocks one `tail` call keeps (recently read blocks are re-read for anchors and prefixes). */
export const TAIL_CACHED_BLOCKS = 64;
/**
 * Work of one `grep` test allowed on the thread that serves requests: the pattern's weight (steps
 * per character: the backtracking bound of a `bounded` pattern, the program size of a `linear`
 * one) times the record's length. At about 20 ns a step this bounds such a test to tens of
 * milliseconds; a larger one runs in the guarded worker.
 */
export const GREP_IN_THREAD_STEPS = 2_000_000;
/**
 * Largest linear-engine program compiled on the thread that serves requests (~10 µs an
 * instruction); a larger pattern's tests all run in the guarded worker.
 */
export const GREP_IN_THREAD_PROGRAM = 2000;
/** Work of `grep` tests on the serving thread after which the scan gives the event loop a turn. */
export const GREP_YIELD_STEPS = 2_000_000;
/** `grep` matches at most this many leading bytes of a record: a guard against enormous records. */
export const GREP_MAX_RECORD_BYTES = 1 << 20;
/** A `grep` pattern sees at most this many leading code units of a record. */
export const GREP_REGEX_MAX_UNITS = 64 * 1024;
/** A filtered (`grep`) tail page stops scanning after this many bytes; its cursor resumes there. */
export const TAIL_SCAN_MAX_BYTES = 64 * 1024 * 1024;
/** …or after this long, so a slow regular expression cannot hold a call indefinitely. */
export const TAIL_SCAN_MAX_MS = 3000;
/** Recently modified files up to this size are read whole, so version and page share one read. */
export const SNAPSHOT_MAX_BYTES = 8 * 1024 * 1024;
/** Line-index checkpoints are kept for this many file versions (a 1 GiB file needs 1,024 numbers). */
export const LINE_INDEX_VERSIONS = 64;
/** `json_read` reads values through a window this large: matches lie close together. */
export const JSON_VALUE_WINDOW_BYTES = 256 * 1024;
/** Bytes read per step when compacting a value too large for one read (it stops at the cap). */
export const JSON_COMPACT_CHUNK_BYTES = 64 * 1024;
/**
 * `json_read` keeps the engine of this many walks, each where its last page ended, for the call
 * that brings that page's cursor (json-pages/continuations.ts); each holds an open descriptor and a
 * value window (JSON_VALUE_WINDOW_BYTES).
 */
export const JSON_CONTINUATIONS = 4;
/** A kept engine nobody continued within this long is closed. */
export const JSON_CONTINUATION_TTL_MS = 30_000;
/** A JSON stream (`pagewise json` into a pipe) sends its lines in buffers this large. */
export const JSON_STREAM_BUFFER_BYTES = 64 * 1024;

// --- json_open handles ---

/** Idle time after which a `json_open` handle expires (`--json-handle-ttl-ms`). */
export const DEFAULT_JSON_HANDLE_TTL_MS = 15 * 60 * 1000;
/** Handles kept per process (`--max-json-handles`); the least recently used is closed beyond it. */
export const DEFAULT_MAX_JSON_HANDLES = 64;
/**
 * Budget whose worth of entries a `list` page collects at least, whatever its own budget: a
 * refusal names the cheapest page, which may be every entry left (a last page carries no cursor),
 * so the entries a small budget would not hold must still be seen when they are few.
 */
export const MIN_COLLECT_TOKENS = 1024;
