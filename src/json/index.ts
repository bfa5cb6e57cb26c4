/**
 * @module
 * The streaming JSON query engine behind `json_open` / `json_read`: strict RFC 8259 tokenizing of
 * JSON, JSONL and JSON-seq (the latter two as one virtual array of records), RFC 6901 pointers and
 * RFC 9535 JSONPath evaluated in one forward pass, results in RFC order, and compact resume states
 * so that page k of a result costs O(page), not a rescan.
 *
 * ```ts
 * const reader = fileHandleReader(handle, size);
 * const format = (await detectFormat(reader, "events.jsonl")).detected_format;
 * const query = compileQuery("jsonpath", "$[?@.level == 'error'].message");
 * for await (const m of runQuery(reader, format, query)) {
 *   const text = compactJsonText(await reader.read(m.start, m.end - m.start));
 *   // … stop when the page is full; encodeResume(m.resume) goes into the cursor
 * }
 * ```
 */

export { compactJsonRange, compactJsonText, JsonCompactor } from "./compact.js";
export { DEFAULT_JSON_LIMITS, type JsonLimits, resolveLimits } from "./limits.js";
export {
  type CompiledQuery,
  compileQuery,
  detectFormat,
  type FormatDetection,
  type JsonMatch,
  type QueryLanguage,
  runQuery,
  runQueryBatches,
  type ValidationResult,
  validate,
} from "./query.js";
export { type ByteReader, bufferReader, fileHandleReader } from "./reader.js";
export { decodeResume, encodeResume, type ResumeState, type ResumeStep } from "./resume.js";
export type { JsonFormat } from "./tokenizer.js";
