/**
 * @module
 * Arguments a cursor carries (a pattern, a JSON query) are bounded, so that a page and its cursor
 * always fit a budget the server accepts (see MAX_CARRIED_ARGUMENT_BYTES).
 */
import { PagewiseError } from "../../core/index.js";
import { MAX_CARRIED_ARGUMENT_BYTES } from "../limits.js";

/** INVALID_ARGUMENT naming `limitName` when `value` is longer than a cursor may carry. */
export function checkCarriedLength(value: string, argument: string, limitName: string): void {
  // Perf: a UTF-8 length is at most three bytes per UTF-16 unit; most values are far shorter.
  if (value.length * 3 <= MAX_CARRIED_ARGUMENT_BYTES) return;
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes <= MAX_CARRIED_ARGUMENT_BYTES) return;
  throw new PagewiseError(
    "INVALID_ARGUMENT",
    `${argument} is ${bytes} bytes long (UTF-8), more than the ${MAX_CARRIED_ARGUMENT_BYTES} it may have: the cursor of every next page carries it.`,
    { limit: { name: limitName, limit: MAX_CARRIED_ARGUMENT_BYTES, value: bytes } },
  );
}
