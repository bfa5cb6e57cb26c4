import { describe, expect, it } from "vitest";
import { Roots } from "../../access/index.js";
import {
  CursorCodec,
  cursorKeyFromSecret,
  DEFAULT_MAX_TOKENS,
  decodeSourceCursor,
  defaultEstimator,
  encodeSourceCursor,
  FileVersions,
} from "../../core/index.js";
import type { SourceContext } from "../shared/context.js";
import { encodeLineCursor } from "../shared/read-cursor.js";
import { JSON_CURSOR, type JsonCursorState } from "./cursor.js";

const codec = new CursorCodec({ key: cursorKeyFromSecret("json-cursor-test-key-0123456789") });
const roots = new Roots([process.cwd()]);
const contextOf = (identity: string): SourceContext => ({
  caller: { identity, roots },
  codec,
  estimator: defaultEstimator,
  versions: new FileVersions(),
});
const runOf = (identity: string) => ({ codec, identity, context: contextOf(identity) });
function encodeJsonCursor(
  _codec: CursorCodec,
  identity: string,
  _roots: Roots,
  s: JsonCursorState & { maxItems?: number },
) {
  const { maxItems, ...state } = s;
  return encodeSourceCursor(
    JSON_CURSOR,
    runOf(identity),
    { max_tokens: DEFAULT_MAX_TOKENS, max_items: maxItems ?? 100 },
    state,
  );
}
function decodeJsonCursor(_codec: CursorCodec, identity: string, _roots: Roots, cursor: string) {
  const { params, state } = decodeSourceCursor(JSON_CURSOR, runOf(identity), cursor);
  const { absolute: _absolute, ...rest } = state;
  return { state: { ...rest, maxItems: params[1] ?? 100 } };
}

const state: JsonCursorState = {
  file: { rootIndex: 0, relPath: "exports/orders.jsonl" },
  digest: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]),
  fingerprint: Uint8Array.from([9, 8, 7, 6, 5, 4]),
  format: "jsonl",
  language: "jsonpath",
  query: "$[*].id",
  resume: { offset: 123_456_789, path: [987_654], skip: 0 },
};

describe("json_read cursor", () => {
  it("round-trips every field and stays short", () => {
    const c = encodeJsonCursor(codec, "anonymous", roots, state);
    // A 20-character path, an offset of 123 MB, a 7-character query: about the contract's 100.
    expect(c.length).toBeLessThanOrEqual(104);
    const { state: back } = decodeJsonCursor(codec, "anonymous", roots, c);
    expect({
      ...back,
      digest: [...back.digest],
      fingerprint: [...back.fingerprint],
    }).toEqual({
      ...state,
      maxItems: 100,
      digest: [...state.digest],
      fingerprint: [...state.fingerprint],
    });
    const custom = encodeJsonCursor(codec, "anonymous", roots, {
      ...state,
      format: "json-seq",
      language: "pointer",
      query: "/0/a~1b",
      maxItems: 1000,
      resume: { offset: 50, path: [3, { keyAt: 20 }], skip: 2 },
    });
    const decoded = decodeJsonCursor(codec, "anonymous", roots, custom).state;
    expect(decoded).toMatchObject({ format: "json-seq", language: "pointer", maxItems: 1000 });
    expect(decoded.resume).toEqual({ offset: 50, path: [3, { keyAt: 20 }], skip: 2 });
  });

  it("refuses another caller's, a modified and a read cursor", () => {
    const c = encodeJsonCursor(codec, "anonymous", roots, state);
    const code = { code: "INVALID_CURSOR" };
    expect(() => decodeJsonCursor(codec, "mallory", roots, c)).toThrow(
      expect.objectContaining(code),
    );
    const flipped = c.slice(0, 30) + (c[30] === "A" ? "B" : "A") + c.slice(31);
    expect(() => decodeJsonCursor(codec, "anonymous", roots, flipped)).toThrow(
      expect.objectContaining(code),
    );
    const read = encodeLineCursor(contextOf("anonymous"), 8000, {
      file: state.file,
      line: 0,
      digest: state.digest,
      fingerprint: state.fingerprint,
      position: 0,
      encoding: "utf-8",
      end: { kind: "eof" },
    });
    expect(() => decodeJsonCursor(codec, "anonymous", roots, read)).toThrow(
      expect.objectContaining(code),
    );
  });
});
