/**
 * The read cursor payload: plain cursors keep their exact layout; range-anchored ones (line
 * cursors into append-only files) round-trip their anchor.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Roots } from "../../access/index.js";
import {
  ByteWriter,
  CursorCodec,
  decodeSourceCursor,
  defaultEstimator,
  encodeSourceCursor,
  ephemeralCursorKey,
  FileVersions,
} from "../../core/index.js";
import type { SourceContext } from "./context.js";
import { writeFileRef } from "./file-ref.js";
import { READ_CURSOR, READ_TOOL, type ReadCursorState } from "./read-cursor.js";

const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "pagewise-rc-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const roots = new Roots([dir]);
const codec = new CursorCodec({ key: ephemeralCursorKey(), now: () => 1_800_000_000_000 });
const ctx: SourceContext = {
  caller: { identity: "me", roots },
  codec,
  estimator: defaultEstimator,
  versions: new FileVersions(),
};
const run = { codec, identity: "me", context: ctx };
const encodeReadCursor = (state: ReadCursorState) =>
  encodeSourceCursor(READ_CURSOR, run, { max_tokens: 2000 }, state);
const decodeReadCursor = (cursor: string) => decodeSourceCursor(READ_CURSOR, run, cursor);

function plain(state: ReadCursorState) {
  return { ...state, digest: [...state.digest], fingerprint: [...state.fingerprint] };
}

const base: ReadCursorState = {
  file: { rootIndex: 0, relPath: "logs/app.log" },
  digest: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]),
  fingerprint: Uint8Array.from([9, 9, 9, 9, 9, 9]),
  position: 123_456,
  line: 42,
  encoding: "utf-8",
  end: { kind: "byte", offset: 200_000 },
};

describe("read cursor payload", () => {
  it("keeps the layout of plain cursors", () => {
    const w = new ByteWriter().u8(1); // the budget's bit; the codec writes the budget itself
    writeFileRef(w, roots, base.file);
    w.raw(base.digest).bytes(base.fingerprint).uint(base.position).uint(42).u8(2).uint(200_000);
    expect(encodeReadCursor(base)).toBe(codec.encode(READ_TOOL, "me", w.finish(), 2000));
    const decoded = decodeReadCursor(encodeReadCursor(base));
    expect(decoded.params).toEqual([2000]);
    const { absolute, ...state } = decoded.state;
    expect(absolute).toBe(path.join(dir, "logs/app.log"));
    expect(plain(state)).toEqual(plain(base));
    expect(decoded.state.anchor).toBeUndefined();
  });

  it("round-trips range-anchored cursors, in both encodings", () => {
    for (const encoding of ["utf-8", "base64"] as const) {
      const state: ReadCursorState = {
        ...base,
        encoding,
        fingerprint: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]),
        anchor: { start: 100_000, size: 1 << 30 },
      };
      const cursor = encodeReadCursor(state);
      expect(cursor.length).toBeLessThanOrEqual(100);
      const { absolute: _, ...back } = decodeReadCursor(cursor).state;
      expect(plain(back)).toEqual(plain(state));
    }
  });
});
