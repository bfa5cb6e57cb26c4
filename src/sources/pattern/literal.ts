/**
 * @module
 * The longest literal every match must contain, read from a u-mode JavaScript regex source: a byte
 * search for it (memchr-speed `Buffer.indexOf`) rules out most text before any regex runs.
 * Conservative: "" whenever the top level has an alternation or nothing literal is required.
 */

const QUANTIFIER_START = /[*+?{]/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  r: "\r",
  t: "\t",
  f: "\f",
  v: "\v",
};

/** Index after the group or class starting at `i` (`(` or `[`). */
function skipBracketed(s: string, i: number): number {
  let depth = 0;
  let inClass = false;
  for (let j = i; j < s.length; j++) {
    const c = s[j];
    if (c === "\\") {
      j++;
      continue;
    }
    if (inClass) {
      if (c === "]") {
        inClass = false;
        if (depth === 0) return j + 1;
      }
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return j + 1;
  }
  return s.length;
}

/** A quantifier at `i`: whether it requires at least one repetition, and its length. */
function quantifierAt(s: string, i: number): { atLeastOne: boolean; length: number } | undefined {
  const c = s[i];
  if (c === undefined || !QUANTIFIER_START.test(c)) return undefined;
  let length = 1;
  let atLeastOne = c === "+";
  if (c === "{") {
    const m = /^\{(\d+)(,\d*)?\}/.exec(s.slice(i));
    if (!m) return undefined;
    length = m[0].length;
    atLeastOne = Number(m[1]) >= 1;
  }
  if (s[i + length] === "?") length++;
  return { atLeastOne, length };
}

/** A top-level literal character at `i` (plain or escaped), and the index after it. */
function literalAt(s: string, i: number): { text: string; next: number } | undefined {
  const c = s[i]!;
  if (c === "\\") {
    const e = s[i + 1];
    if (e === undefined) return undefined;
    if (/[\^$\\.*+?()[\]{}|/-]/.test(e)) return { text: e, next: i + 2 };
    const simple = SIMPLE_ESCAPES[e];
    return simple === undefined ? undefined : { text: simple, next: i + 2 };
  }
  if (/[\^$.()[\]{}|*+?]/.test(c)) return undefined;
  const cp = s.codePointAt(i)!;
  const text = String.fromCodePoint(cp);
  return { text, next: i + text.length };
}

/** Index after the escape starting at `i` (a backslash) that literalAt did not take. */
function afterEscape(s: string, i: number): number {
  const e = s[i + 1];
  const closing = (ch: string) => {
    const j = s.indexOf(ch, i);
    return j < 0 ? s.length : j + 1;
  };
  if (e === "x") return i + 4;
  if (e === "c") return i + 3;
  if (e === "u") return s[i + 2] === "{" ? closing("}") : i + 6;
  if ((e === "p" || e === "P") && s[i + 2] === "{") return closing("}");
  if (e === "k" && s[i + 2] === "<") return closing(">");
  let j = i + 2;
  if (e !== undefined && /[0-9]/.test(e)) while (j < s.length && /[0-9]/.test(s[j]!)) j++;
  return j;
}

export function requiredLiteral(source: string): string {
  let best = "";
  let run = "";
  const endRun = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === "|") return "";
    const lit = literalAt(source, i);
    if (lit) {
      const q = quantifierAt(source, lit.next);
      if (!q) {
        run += lit.text;
        i = lit.next;
        continue;
      }
      if (q.atLeastOne) run += lit.text;
      endRun();
      i = lit.next + q.length;
      continue;
    }
    endRun();
    if (c === "(" || c === "[") i = skipBracketed(source, i);
    else if (c === "\\") i = afterEscape(source, i);
    else i++;
    const q = quantifierAt(source, i);
    if (q) i += q.length;
  }
  endRun();
  return best;
}
