/**
 * @module
 * The `json_read` cursor: self-contained (no handle needed), bound by the codec's MAC to the tool
 * and the caller, and carrying everything the next page needs.
 *
 * Payload (ByteWriter): file ref (root hash + relative path) · content digest (8 bytes) · identity
 * fingerprint (length-prefixed, 6 bytes or empty) · flags (format 2 bits, language 1 bit, custom
 * max_items 1 bit) · [max_items] · query text · the engine's resume state (`encodeResume`: offset,
 * skip and container path as varints). The query text is stored as is, because the server must
 * recompile it; it is usually the longest part after the path.
 */
import type { Roots } from "../../access/index.js";
import { ByteWriter, type CursorCodec, malformedCursor } from "../../core/index.js";
import {
  decodeResume,
  encodeResume,
  type JsonFormat,
  type QueryLanguage,
  type ResumeState,
} from "../../json/index.js";
import { type FileRef, readVersionedFileRef, writeVersionedFileRef } from "../file-ref.js";

export const JSON_READ_TOOL = "json_read";

const FORMATS: readonly JsonFormat[] = ["json", "jsonl", "json-seq"];
const LANGUAGES: readonly QueryLanguage[] = ["jsonpath", "pointer"];

export interface JsonCursorState {
  readonly file: FileRef;
  readonly digest: Uint8Array;
  readonly fingerprint: Uint8Array;
  readonly format: JsonFormat;
  readonly language: QueryLanguage;
  readonly query: string;
  /** Set when the caller chose max_items (else the default applies). */
  readonly maxItems?: number;
  readonly resume: ResumeState;
}

export function encodeJsonCursor(
  codec: CursorCodec,
  identity: string,
  roots: Roots,
  s: JsonCursorState,
): string {
  const w = new ByteWriter();
  writeVersionedFileRef(w, roots, s);
  const flags =
    FORMATS.indexOf(s.format) |
    (LANGUAGES.indexOf(s.language) << 2) |
    (s.maxItems !== undefined ? 8 : 0);
  w.u8(flags);
  if (s.maxItems !== undefined) w.uint(s.maxItems);
  w.string(s.query).bytes(encodeResume(s.resume));
  return codec.encode(JSON_READ_TOOL, identity, w.finish());
}

export function decodeJsonCursor(
  codec: CursorCodec,
  identity: string,
  roots: Roots,
  cursor: string,
): { state: JsonCursorState; absolute: string } {
  const r = codec.decode(JSON_READ_TOOL, identity, cursor);
  const { absolute, file: ref, digest, fingerprint } = readVersionedFileRef(r, roots);
  const flags = r.u8();
  const format = FORMATS[flags & 3];
  const language = LANGUAGES[(flags >> 2) & 1];
  if (format === undefined || language === undefined || flags >> 4 !== 0) {
    throw malformedCursor();
  }
  const maxItems = flags & 8 ? r.uint() : undefined;
  const query = r.string();
  const resume = decodeResume(r.bytes());
  r.end();
  return {
    state: {
      file: ref,
      digest,
      fingerprint,
      format,
      language,
      query,
      ...(maxItems !== undefined ? { maxItems } : {}),
      resume,
    },
    absolute,
  };
}
