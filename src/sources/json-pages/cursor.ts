/**
 * @module
 * The `json_read` cursor: self-contained (no handle needed), bound by the codec's MAC to the tool
 * and the caller, and carrying everything the next page needs.
 *
 * Payload (after the page parameters): file ref (root hash + relative path) · version digest
 * (8 bytes) · version kind (length-prefixed: empty for a state version, 1 byte for a content
 * version; core/version) · flags (format 2 bits,
 * language 1 bit) · query text · the engine's resume state (`encodeResume`: offset, skip and
 * container path as varints). The query text is stored as is, because the server must
 * recompile it; it is usually the longest part after the path.
 */
import {
  type ByteReader,
  type ByteWriter,
  type CursorFormat,
  MAX_TOKENS_PARAM,
  malformedCursor,
} from "../../core/index.js";
import {
  decodeResume,
  encodeResume,
  type JsonFormat,
  type QueryLanguage,
  type ResumeState,
} from "../../json/index.js";
import { DEFAULT_JSON_MAX_ITEMS, MAX_JSON_MAX_ITEMS } from "../limits.js";
import type { SourceContext } from "../shared/context.js";
import { type FileRef, readVersionedFileRef, writeVersionedFileRef } from "../shared/file-ref.js";

export const JSON_READ_TOOL = "json_read";

const FORMATS: readonly JsonFormat[] = ["json", "jsonl", "json-seq"];
const LANGUAGES: readonly QueryLanguage[] = ["jsonpath", "pointer"];

export interface JsonCursorState {
  readonly file: FileRef;
  /** The file's path under the caller's roots (set when decoded). */
  readonly absolute?: string;
  readonly digest: Uint8Array;
  readonly fingerprint: Uint8Array;
  readonly format: JsonFormat;
  readonly language: QueryLanguage;
  readonly query: string;
  readonly resume: ResumeState;
}

function writeJsonState(w: ByteWriter, ctx: SourceContext, s: JsonCursorState): void {
  writeVersionedFileRef(w, ctx.caller.roots, s);
  w.u8(FORMATS.indexOf(s.format) | (LANGUAGES.indexOf(s.language) << 2));
  w.string(s.query).bytes(encodeResume(s.resume));
}

function readJsonState(r: ByteReader, ctx: SourceContext): JsonCursorState {
  const { absolute, file, digest, fingerprint } = readVersionedFileRef(r, ctx.caller.roots);
  const flags = r.u8();
  const format = FORMATS[flags & 3];
  const language = LANGUAGES[(flags >> 2) & 1];
  if (format === undefined || language === undefined || flags >> 3 !== 0) throw malformedCursor();
  const query = r.string();
  const resume = decodeResume(r.bytes());
  return { file, absolute, digest, fingerprint, format, language, query, resume };
}

/**
 * The layout of `json_read` cursors: the page parameters (budget, matches per page), then file,
 * version, format, language, query and the engine's resume state. The json_read source supplies
 * the server's budget cap.
 */
export const JSON_CURSOR: CursorFormat<JsonCursorState, SourceContext> = {
  tool: JSON_READ_TOOL,
  params: [
    MAX_TOKENS_PARAM,
    { name: "max_items", default: DEFAULT_JSON_MAX_ITEMS, max: MAX_JSON_MAX_ITEMS },
  ],
  readState: readJsonState,
  writeState: (w, state, ctx) => writeJsonState(w, ctx, state),
};
