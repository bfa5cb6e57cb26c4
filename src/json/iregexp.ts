/**
 * @module
 * I-Regexp (RFC 9485) for the JSONPath `match()` and `search()` functions.
 *
 * A pattern is parsed by the RFC's grammar and compiled to a Thompson NFA that is simulated state
 * set by state set (no backtracking): time is O(input length × pattern states) whatever the pattern,
 * so "catastrophic" patterns such as `(a|a)*b` or `(a+)+$` cannot blow up. Bounds: the compiled size
 * (`max_regex_states`, counted after expanding `{n,m}`) and the input length
 * (`max_regex_input_chars`), and the nesting of groups (`max_regex_nesting`: the parser recurses once
 * per group); exceeding any is `RESOURCE_LIMIT_EXCEEDED`. Semantics follow the RFC's mapping to
 * ECMAScript: `.` matches any character but LF and CR; `\p{…}` / `\P{…}` are Unicode general
 * categories; matching is over code points.
 *
 * `^` and `$` outside a character class: RFC 9485's grammar lists them among the ordinary
 * characters, but the regular-expression engines it maps to (and the JSONPath compliance test
 * suite, "explicit caret" / "explicit dollar") read them as the start and end of the string. They are
 * anchors here, so `match(@, '^ab.*')` equals `match(@, 'ab.*')` and `search(@, '^ab')` only
 * finds "ab" at the start. Inside a class they keep their class meaning (`[^…]`, `[$]`).
 */

import { PagewiseError } from "../core/index.js";
import type { JsonLimits } from "./limits.js";

type Node =
  | { t: "set"; test: (cp: number) => boolean }
  /** `^` (start of the string) or `$` (its end). */
  | { t: "anchor"; end: boolean }
  | { t: "cat"; items: Node[] }
  | { t: "alt"; items: Node[] }
  | { t: "rep"; item: Node; min: number; max: number };

const OP_CHAR = 0;
const OP_SPLIT = 1;
const OP_MATCH = 2;
const OP_JUMP = 3;
const OP_BEGIN = 4; // passes only at the start of the input
const OP_END = 5; // passes only at the end of the input

export interface IRegexp {
  /** True when the pattern matches the whole string (match) or a substring (search). */
  test(input: string): boolean;
  /** States of the compiled automaton. */
  readonly states: number;
  /** States the last {@link test} visited: at most (input code points + 1) × states. */
  readonly steps: number;
}

/**
 * Compiles `pattern`; null when it is not a valid I-Regexp (the RFC then makes match/search false).
 * `whole`: match() (anchored at both ends) rather than search().
 */
export function compileIRegexp(
  pattern: string,
  whole: boolean,
  limits: JsonLimits,
): IRegexp | null {
  let ast: Node;
  try {
    ast = new RegexParser(pattern, limits.maxRegexNesting).parse();
  } catch (e) {
    if (e === INVALID) return null;
    throw e;
  }
  const prog = new Program(limits.maxRegexStates, pattern);
  const start = prog.compile(ast);
  prog.patch(start.outs, prog.emit(OP_MATCH, null, -1, -1));
  return new NfaMatcher(prog, start.entry, whole, limits);
}

const INVALID = Symbol("invalid I-Regexp");

// --- parser -----------------------------------------------------------------------------------

const CATEGORY = /^(L[lmotu]?|M[cen]?|N[dlo]?|P[cdefios]?|Z[lps]?|S[ckmo]?|C[cfno]?)$/;
const categoryCache = new Map<string, RegExp>();

function categoryTest(name: string, negate: boolean): (cp: number) => boolean {
  let re = categoryCache.get(name);
  if (!re) {
    re = new RegExp(`^\\p{${name}}$`, "u");
    categoryCache.set(name, re);
  }
  const r = re;
  return negate
    ? (cp) => !r.test(String.fromCodePoint(cp))
    : (cp) => r.test(String.fromCodePoint(cp));
}

class RegexParser {
  pos = 0;
  depth = 0;
  readonly cps: number[];
  constructor(
    pattern: string,
    readonly maxNesting: number,
  ) {
    this.cps = [];
    for (const ch of pattern) {
      const cp = ch.codePointAt(0)!;
      if (cp >= 0xd800 && cp <= 0xdfff) throw INVALID;
      this.cps.push(cp);
    }
  }

  peek(): number {
    return this.pos < this.cps.length ? this.cps[this.pos] : -1;
  }

  parse(): Node {
    const node = this.parseAlt();
    if (this.pos !== this.cps.length) throw INVALID;
    return node;
  }

  parseAlt(): Node {
    const items = [this.parseBranch()];
    while (this.peek() === 0x7c /* | */) {
      this.pos++;
      items.push(this.parseBranch());
    }
    return items.length === 1 ? items[0] : { t: "alt", items };
  }

  parseBranch(): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === -1 || c === 0x7c || c === 0x29 /* ) */) break;
      const atom = this.parseQuantified(this.parseAtom());
      if (isQuantifier(this.peek())) throw INVALID;
      items.push(atom);
    }
    return { t: "cat", items };
  }

  /** `atom` with the quantifier that follows it (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`), if any. */
  parseQuantified(atom: Node): Node {
    const q = this.peek();
    if (atom.t === "anchor" && isQuantifier(q)) throw INVALID;
    if (q === 0x2a) {
      this.pos++;
      return { t: "rep", item: atom, min: 0, max: Number.POSITIVE_INFINITY };
    }
    if (q === 0x2b) {
      this.pos++;
      return { t: "rep", item: atom, min: 1, max: Number.POSITIVE_INFINITY };
    }
    if (q === 0x3f) {
      this.pos++;
      return { t: "rep", item: atom, min: 0, max: 1 };
    }
    if (q !== 0x7b) return atom;
    this.pos++;
    const min = this.parseQuantExact();
    let max = min;
    if (this.peek() === 0x2c) {
      this.pos++;
      max = this.peek() === 0x7d ? Number.POSITIVE_INFINITY : this.parseQuantExact();
    }
    if (this.peek() !== 0x7d) throw INVALID;
    this.pos++;
    if (max < min) throw INVALID;
    return { t: "rep", item: atom, min, max };
  }

  parseQuantExact(): number {
    const start = this.pos;
    let v = 0;
    while (this.peek() >= 0x30 && this.peek() <= 0x39) {
      v = v * 10 + (this.peek() - 0x30);
      this.pos++;
    }
    if (this.pos === start) throw INVALID;
    return v;
  }

  parseAtom(): Node {
    const c = this.peek();
    switch (c) {
      case 0x28: {
        this.pos++;
        if (++this.depth > this.maxNesting) {
          throw new PagewiseError(
            "RESOURCE_LIMIT_EXCEEDED",
            `The regular expression nests groups too deeply: max_regex_nesting is ${this.maxNesting}`,
            {
              limit: { name: "max_regex_nesting", limit: this.maxNesting, value: this.depth },
              hint: "Remove redundant parentheses from the pattern.",
            },
          );
        }
        const inner = this.parseAlt();
        if (this.peek() !== 0x29) throw INVALID;
        this.pos++;
        this.depth--;
        return inner;
      }
      case 0x5e:
        this.pos++;
        return { t: "anchor", end: false };
      case 0x24:
        this.pos++;
        return { t: "anchor", end: true };
      case 0x2e:
        this.pos++;
        return { t: "set", test: (cp) => cp !== 0x0a && cp !== 0x0d };
      case 0x5b:
        return this.parseClass();
      case 0x5c:
        return this.parseEscape();
      case 0x2a:
      case 0x2b:
      case 0x3f:
      case 0x29:
      case 0x5d:
      case 0x7b:
      case 0x7d:
      case 0x7c:
        throw INVALID;
      default: {
        this.pos++;
        return { t: "set", test: (cp) => cp === c };
      }
    }
  }

  /** `\` escapes: a single character, or `\p{…}` / `\P{…}`. */
  parseEscape(): Node {
    this.pos++;
    const e = this.peek();
    this.pos++;
    if (e === 0x70 || e === 0x50) {
      if (this.peek() !== 0x7b) throw INVALID;
      this.pos++;
      let name = "";
      while (this.peek() !== 0x7d) {
        if (this.peek() === -1) throw INVALID;
        name += String.fromCodePoint(this.peek());
        this.pos++;
      }
      this.pos++;
      if (!CATEGORY.test(name)) throw INVALID;
      return { t: "set", test: categoryTest(name, e === 0x50) };
    }
    const single = singleEscape(e);
    if (single < 0) throw INVALID;
    return { t: "set", test: (cp) => cp === single };
  }

  parseClass(): Node {
    this.pos++; // [
    let negated = false;
    if (this.peek() === 0x5e) {
      negated = true;
      this.pos++;
    }
    const tests: ((cp: number) => boolean)[] = [];
    const ranges: number[] = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === -1) throw INVALID;
      if (c === 0x5d) {
        if (first) throw INVALID;
        this.pos++;
        break;
      }
      if (c === 0x2d /* - */) {
        // Allowed first, or last (just before ']').
        this.pos++;
        if (first || this.peek() === 0x5d) {
          ranges.push(0x2d, 0x2d);
          first = false;
          continue;
        }
        throw INVALID;
      }
      first = false;
      if (c === 0x5c && (this.cps[this.pos + 1] === 0x70 || this.cps[this.pos + 1] === 0x50)) {
        const node = this.parseEscape() as { t: "set"; test: (cp: number) => boolean };
        tests.push(node.test);
        continue;
      }
      const lo = this.parseClassChar();
      if (
        this.peek() === 0x2d &&
        this.cps[this.pos + 1] !== 0x5d &&
        this.pos + 1 < this.cps.length
      ) {
        this.pos++;
        const hi = this.parseClassChar();
        if (hi < lo) throw INVALID;
        ranges.push(lo, hi);
      } else ranges.push(lo, lo);
    }
    const test = (cp: number): boolean => {
      for (let i = 0; i < ranges.length; i += 2)
        if (cp >= ranges[i] && cp <= ranges[i + 1]) return true;
      for (const t of tests) if (t(cp)) return true;
      return false;
    };
    return { t: "set", test: negated ? (cp) => !test(cp) : test };
  }

  parseClassChar(): number {
    const c = this.peek();
    if (c === 0x5c) {
      this.pos++;
      const e = this.peek();
      this.pos++;
      const single = singleEscape(e);
      if (single < 0) throw INVALID;
      return single;
    }
    if (c === 0x5b || c === 0x5d || c === 0x2d || c === -1) throw INVALID;
    this.pos++;
    return c;
  }
}

/** True for the characters that start a quantifier: `*`, `+`, `?` and the left brace. */
function isQuantifier(c: number): boolean {
  return c === 0x2a || c === 0x2b || c === 0x3f || c === 0x7b;
}

/** The character a SingleCharEsc stands for, or -1. */
function singleEscape(e: number): number {
  switch (e) {
    case 0x6e:
      return 0x0a;
    case 0x72:
      return 0x0d;
    case 0x74:
      return 0x09;
    case 0x28:
    case 0x29:
    case 0x2a:
    case 0x2b:
    case 0x2d:
    case 0x2e:
    case 0x3f:
    case 0x5b:
    case 0x5c:
    case 0x5d:
    case 0x5e:
    case 0x7b:
    case 0x7c:
    case 0x7d:
      return e;
    default:
      return -1;
  }
}

// --- NFA --------------------------------------------------------------------------------------

interface Fragment {
  entry: number;
  /** States whose `next` (or `alt`) must be patched to what follows. */
  outs: number[];
}

class Program {
  op: number[] = [];
  next: number[] = [];
  alt: number[] = [];
  test: (((cp: number) => boolean) | null)[] = [];

  constructor(
    readonly maxStates: number,
    readonly pattern: string,
  ) {}

  emit(op: number, test: ((cp: number) => boolean) | null, next: number, alt: number): number {
    const id = this.op.length;
    if (id >= this.maxStates) {
      throw new PagewiseError(
        "RESOURCE_LIMIT_EXCEEDED",
        `The regular expression is too complex: max_regex_states is ${this.maxStates}`,
        {
          limit: { name: "max_regex_states", limit: this.maxStates, value: id + 1 },
          hint: "Simplify the pattern (large {n,m} counts expand into many states).",
        },
      );
    }
    this.op.push(op);
    this.test.push(test);
    this.next.push(next);
    this.alt.push(alt);
    return id;
  }

  /** Outs are encoded as state*2 (+1 for the alt branch). */
  patch(outs: number[], target: number): void {
    for (const o of outs) {
      if (o & 1) this.alt[o >> 1] = target;
      else this.next[o >> 1] = target;
    }
  }

  compile(node: Node): Fragment {
    switch (node.t) {
      case "set": {
        const s = this.emit(OP_CHAR, node.test, -1, -1);
        return { entry: s, outs: [s * 2] };
      }
      case "anchor": {
        const s = this.emit(node.end ? OP_END : OP_BEGIN, null, -1, -1);
        return { entry: s, outs: [s * 2] };
      }
      case "cat": {
        if (node.items.length === 0) {
          const s = this.emit(OP_JUMP, null, -1, -1);
          return { entry: s, outs: [s * 2] };
        }
        let frag = this.compile(node.items[0]);
        for (let i = 1; i < node.items.length; i++) {
          const f = this.compile(node.items[i]);
          this.patch(frag.outs, f.entry);
          frag = { entry: frag.entry, outs: f.outs };
        }
        return frag;
      }
      case "alt": {
        const frags = node.items.map((n) => this.compile(n));
        let entry = frags[frags.length - 1].entry;
        const outs: number[] = [];
        for (const f of frags) outs.push(...f.outs);
        for (let i = frags.length - 2; i >= 0; i--)
          entry = this.emit(OP_SPLIT, null, frags[i].entry, entry);
        return { entry, outs };
      }
      case "rep": {
        const { item, min, max } = node;
        let frag: Fragment | null = null;
        const append = (f: Fragment): void => {
          if (frag) {
            this.patch(frag.outs, f.entry);
            frag = { entry: frag.entry, outs: f.outs };
          } else frag = f;
        };
        for (let i = 0; i < min; i++) append(this.compile(item));
        if (max === Number.POSITIVE_INFINITY) {
          const body = this.compile(item);
          const split = this.emit(OP_SPLIT, null, body.entry, -1);
          this.patch(body.outs, split);
          append({ entry: split, outs: [split * 2 + 1] });
        } else {
          for (let i = min; i < max; i++) {
            const body = this.compile(item);
            const split = this.emit(OP_SPLIT, null, body.entry, -1);
            append({ entry: split, outs: [...body.outs, split * 2 + 1] });
          }
        }
        if (!frag) {
          const s = this.emit(OP_JUMP, null, -1, -1);
          frag = { entry: s, outs: [s * 2] };
        }
        return frag;
      }
    }
  }
}

class NfaMatcher implements IRegexp {
  readonly #p: Program;
  readonly #start: number;
  readonly #whole: boolean;
  readonly #maxInput: number;
  readonly #maxSteps: number;
  #mark: Uint32Array;
  #gen = 0;
  steps = 0;

  constructor(p: Program, start: number, whole: boolean, limits: JsonLimits) {
    this.#p = p;
    this.#start = start;
    this.#whole = whole;
    this.#maxInput = limits.maxRegexInputChars;
    this.#maxSteps = limits.maxRegexSteps;
    this.#mark = new Uint32Array(p.op.length);
  }

  get states(): number {
    return this.#p.op.length;
  }

  test(input: string): boolean {
    if (input.length > this.#maxInput) {
      throw new PagewiseError(
        "RESOURCE_LIMIT_EXCEEDED",
        `A string is too long for match()/search(): max_regex_input_chars is ${this.#maxInput}`,
        {
          limit: { name: "max_regex_input_chars", limit: this.#maxInput, value: input.length },
          hint: "Narrow the query so the regular expression is applied to shorter strings.",
        },
      );
    }
    // The simulation visits each state at most once per position: bounded before it runs, a test
    // cannot hold the thread that serves requests however hostile the pattern and the string.
    const bound = (input.length + 1) * this.states;
    if (bound > this.#maxSteps) {
      throw new PagewiseError(
        "RESOURCE_LIMIT_EXCEEDED",
        `A match()/search() test is too large: its regex of ${this.states} states over a string of ${input.length} characters exceeds max_regex_steps (${this.#maxSteps}).`,
        {
          limit: { name: "max_regex_steps", limit: this.#maxSteps, value: bound },
          hint: "Use a smaller regular expression, or apply it to shorter strings.",
        },
      );
    }
    const p = this.#p;
    this.steps = 0;
    let cur: number[] = [];
    let nxt: number[] = [];
    this.#newGen();
    this.#atStart = true;
    this.#atEnd = input.length === 0;
    if (this.#add(cur, this.#start)) {
      if (!this.#whole) return true;
      if (input.length === 0) return true;
    }
    for (let i = 0; i < input.length; ) {
      const cp = input.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      this.#newGen();
      this.#atStart = false;
      this.#atEnd = i >= input.length;
      let matched = false;
      for (const s of cur) {
        if (p.op[s] === OP_CHAR && p.test[s]!(cp)) {
          if (this.#add(nxt, p.next[s])) matched = true;
        }
      }
      if (!this.#whole) {
        if (matched) return true;
        if (this.#add(nxt, this.#start)) return true;
      } else if (matched && i >= input.length) return true;
      const t = cur;
      cur = nxt;
      nxt = t;
      nxt.length = 0;
      if (cur.length === 0 && this.#whole) return false;
    }
    return false;
  }

  /** Whether the closure being computed is at the start / the end of the input (for `^` / `$`). */
  #atStart = false;
  #atEnd = false;

  #newGen(): void {
    this.#gen++;
    if (this.#gen === 0xffffffff) {
      this.#mark.fill(0);
      this.#gen = 1;
    }
  }

  /** Adds the closure of `s` to `list`; true when it reaches the match state. */
  #add(list: number[], s: number): boolean {
    const p = this.#p;
    const stack = [s];
    let found = false;
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (x < 0 || this.#mark[x] === this.#gen) continue;
      this.#mark[x] = this.#gen;
      this.steps++;
      switch (p.op[x]) {
        case OP_CHAR:
          list.push(x);
          break;
        case OP_MATCH:
          found = true;
          break;
        case OP_JUMP:
          stack.push(p.next[x]);
          break;
        case OP_BEGIN:
          if (this.#atStart) stack.push(p.next[x]);
          break;
        case OP_END:
          if (this.#atEnd) stack.push(p.next[x]);
          break;
        case OP_SPLIT:
          stack.push(p.alt[x], p.next[x]);
          break;
      }
    }
    return found;
  }
}
