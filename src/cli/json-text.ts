/**
 * @module
 * JSON text as `pagewise json` prints it: each match's value as spelled in the file (a page's
 * values are located in the page's text by the JSON engine, never parsed, so 12345678901234567890
 * stays itself), and pretty-printed for a terminal.
 */
import { bufferReader, compileQuery, runQuery } from "../json/index.js";

const VALUES = compileQuery("jsonpath", "$.items[*].value");

/** The text of each item's `value` in a json_read page, by item index (a truncated item has none). */
export async function pageValueTexts(pageText: string): Promise<Map<number, string>> {
  const bytes = Buffer.from(pageText, "utf8");
  const out = new Map<number, string>();
  for await (const m of runQuery(bufferReader(bytes), "json", VALUES)) {
    const index = Number(m.pointer.split("/")[2]);
    out.set(index, bytes.toString("utf8", m.start, m.end));
  }
  return out;
}

/**
 * Compact JSON text indented for a reader: a newline and `indent` per level inside objects and
 * arrays, a space after each colon, empty containers and every scalar as they are. Hand-written
 * because the values must keep their spelling (JSON.stringify of a parsed value would not).
 */
export function prettyJson(compact: string, indent = "  "): string {
  let out = "";
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i]!;
    if (inString) {
      out += c;
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      if (compact[i + 1] === close) {
        out += c + close;
        i++;
      } else out += `${c}\n${indent.repeat(++depth)}`;
    } else if (c === "}" || c === "]") out += `\n${indent.repeat(--depth)}${c}`;
    else if (c === ",") out += `,\n${indent.repeat(depth)}`;
    else if (c === ":") out += ": ";
    else out += c;
  }
  return out;
}
