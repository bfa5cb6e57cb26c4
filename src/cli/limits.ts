/**
 * @module
 * Limits and defaults of the terminal commands.
 */

/**
 * Budget of each page a command walks by itself to print all of its content into a pipe (no page
 * is shown to a model, so the budget only sets how much one call reads): large enough that the
 * per-call work (open, cursor, version check) is a small share of a page.
 */
export const STREAM_PAGE_TOKENS = 200_000;

/** Bytes read per step when `read` copies a file into a pipe. */
export const STREAM_READ_BYTES = 256 * 1024;
/**
 * How much a server's old generation may grow past what survived its last full collection, in
 * percent (V8's `--heap-growing-percent`; its own factor goes up to 4×). See `boundHeapGrowth`.
 */
export const HEAP_GROWING_PERCENT = 30;
