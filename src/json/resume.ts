/**
 * @module
 * The resume state of a query: where to re-enter the source and how many matches to skip there.
 *
 * A state names a *clean point*: a byte offset just after a value, at which the evaluator's whole
 * state follows from the container path alone (no match held back for ordering, no filter or
 * negative-index decision pending). Resuming re-enters the tokenizer at `offset` with that path,
 * rebuilds the evaluator by replaying the path through the query, and skips the first `skip`
 * matches (those emitted between the clean point and the match the state continues after).
 *
 * Encoding (compact, for cursors): version byte, then unsigned LEB128 varints: offset, skip, depth,
 * and per level `index*2` (array index / record index) or `back*2+1` (the byte offset of the
 * member name's opening quote, stored as its distance back from `offset`: names are read back from
 * the source, so long names do not make cursors long); then the number of `done` triples and the triples.
 */

import { PagewiseError } from "../core/index.js";

/** One step of a resume path: an array/record index, or a member name (by its offset in the source). */
export type ResumeStep = number | { keyAt: number; key?: string };

export interface ResumeState {
  /** Byte offset just after a value (or 0: the start). */
  offset: number;
  /** The container path at `offset`: for each open level, its current child (the last one is the value that ended at `offset`). */
  path: ResumeStep[];
  /** Matches to skip after re-entering. */
  skip: number;
  /**
   * Name selectors already used up in open containers, as `[level, thread, mask]` triples (bit j:
   * selector j of that container's thread). Without them a resumed `$..name` would wait for a
   * member that was seen before the offset. Usually empty.
   */
  done?: [number, number, number][];
}

const VERSION = 1;

export function encodeResume(state: ResumeState): Uint8Array {
  const out: number[] = [VERSION];
  writeVarint(out, state.offset);
  writeVarint(out, state.skip);
  writeVarint(out, state.path.length);
  for (const step of state.path) {
    if (typeof step === "number") writeVarint(out, step * 2);
    else {
      // Names are stored as their distance back from the offset: inner names are near it.
      if (step.keyAt >= state.offset)
        throw new RangeError("a member name must precede the resume offset");
      writeVarint(out, (state.offset - step.keyAt) * 2 + 1);
    }
  }
  const done = state.done ?? [];
  writeVarint(out, done.length);
  for (const [level, thread, mask] of done) {
    writeVarint(out, level);
    writeVarint(out, thread);
    writeVarint(out, mask);
  }
  return Uint8Array.from(out);
}

export function decodeResume(bytes: Uint8Array): ResumeState {
  const r = { pos: 0 };
  if (bytes.length === 0 || bytes[0] !== VERSION) invalid();
  r.pos = 1;
  const offset = readVarint(bytes, r);
  const skip = readVarint(bytes, r);
  const depth = readVarint(bytes, r);
  if (depth > bytes.length) invalid();
  const path: ResumeStep[] = [];
  for (let i = 0; i < depth; i++) {
    const v = readVarint(bytes, r);
    if (v % 2 === 0) path.push(v / 2);
    else {
      const back = (v - 1) / 2;
      if (back > offset || back === 0) invalid();
      path.push({ keyAt: offset - back });
    }
  }
  const count = readVarint(bytes, r);
  if (count > bytes.length) invalid();
  const done: [number, number, number][] = [];
  for (let i = 0; i < count; i++) {
    const level = readVarint(bytes, r);
    const thread = readVarint(bytes, r);
    const mask = readVarint(bytes, r);
    if (level >= depth || mask >= 2 ** 30) invalid();
    done.push([level, thread, mask]);
  }
  if (r.pos !== bytes.length) invalid();
  if (offset === 0 && path.length > 0) invalid();
  return done.length > 0 ? { offset, path, skip, done } : { offset, path, skip };
}

function writeVarint(out: number[], value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`varint out of range: ${value}`);
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

function readVarint(bytes: Uint8Array, r: { pos: number }): number {
  let value = 0;
  let scale = 1;
  for (let n = 0; n < 8; n++) {
    if (r.pos >= bytes.length) invalid();
    const b = bytes[r.pos++];
    value += (b & 0x7f) * scale;
    if (b < 0x80) {
      if (!Number.isSafeInteger(value)) invalid();
      return value;
    }
    scale *= 0x80;
  }
  invalid();
}

function invalid(): never {
  throw new PagewiseError("INVALID_CURSOR", "The query's resume state is malformed", {
    hint: "Run the query again without a cursor.",
  });
}
