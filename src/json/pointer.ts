/**
 * @module
 * RFC 6901 JSON Pointer: parsing (plain, and the `#` URI-fragment form with percent-decoding) and
 * compilation to query segments. A pointer selects at most one value; evaluation stops reading as
 * soon as that value is complete.
 */

import { PagewiseError } from "../core/index.js";
import type { Segment } from "./jsonpath-ast.js";

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The reference tokens of `pointer` (unescaped), or a QUERY_SYNTAX_ERROR. */
export function parsePointer(pointer: string): string[] {
  let text = pointer;
  let offsetShift = 0;
  if (text.startsWith("#")) {
    text = percentDecode(text.slice(1));
    offsetShift = 1;
  }
  if (text === "") return [];
  if (text[0] !== "/") {
    fail(
      "a JSON Pointer is empty or starts with '/'",
      offsetShift,
      'e.g. "/items/0/name" (or "#/items/0/name")',
    );
  }
  const tokens: string[] = [];
  let pos = 1;
  for (const raw of text.slice(1).split("/")) {
    const at = raw.search(/~(?![01])/);
    if (at >= 0)
      fail(
        "'~' must be followed by 0 or 1 (write ~0 for '~' and ~1 for '/')",
        offsetShift + pos + at,
      );
    tokens.push(raw.replace(/~1/g, "/").replace(/~0/g, "~"));
    pos += raw.length + 1;
  }
  return tokens;
}

/** The pointer as query segments of `ptr` selectors (member name, or array index when valid). */
export function compilePointer(pointer: string): Segment[] {
  return parsePointer(pointer).map((token) => {
    const index =
      ARRAY_INDEX.test(token) && Number.isSafeInteger(Number(token)) ? Number(token) : -1;
    return { descendant: false, selectors: [{ kind: "ptr" as const, name: token, index }] };
  });
}

function percentDecode(s: string): string {
  if (s.indexOf("%") < 0) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length; ) {
    const c = s[i];
    if (c === "%") {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex))
        fail("'%' must be followed by two hexadecimal digits", i + 1);
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
    } else {
      const cp = s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      for (const b of enc.encode(ch)) bytes.push(b);
      i += ch.length;
    }
  }
  try {
    return STRICT_UTF8.decode(Uint8Array.from(bytes));
  } catch {
    fail("the percent-encoded bytes are not valid UTF-8", 1);
  }
}

function fail(message: string, position: number, hint?: string): never {
  throw new PagewiseError("QUERY_SYNTAX_ERROR", `Invalid JSON Pointer: ${message}`, {
    location: { position, column: position + 1 },
    hint: hint ?? "JSON Pointer follows RFC 6901, e.g. /items/0/name.",
  });
}
