/**
 * @module
 * What a JavaScript regular expression (u-mode syntax, already accepted by V8) does, read from its
 * syntax: how much work V8's backtracking engine can spend per character of text, how long a
 * match can be, and whether matches stay inside one line. The pattern module picks an engine from
 * this (pattern.ts), and the search scan picks how to read text (scan.ts).
 *
 * Written by hand because no library bounds a backtracking engine's work. The bound is the size
 * of the backtracking tree at one start position: a sequence `a b` explores `b` once for every way
 * `a` completes (`steps(a) + paths(a) × steps(b)`), an alternation the sum of its alternatives, a
 * counted repetition its unrolled expansion, an atom or an assertion one step. An unbounded
 * repetition makes the tree unbounded (`a+b` over a run of `a` is quadratic), except as the very
 * last thing a match does: reaching it is success, so it runs once per match and consumes what it
 * steps over (`TODO.*`). V8 never does more than this tree: a pattern whose tree is bounded runs
 * in linear time on V8 itself, with exactly JavaScript's semantics.
 */

/** A parsed pattern. Atoms keep their source, to ask V8 what they match. */
export type PatternNode =
  | { readonly type: "atom"; readonly source: string }
  | { readonly type: "assertion"; readonly anchor: boolean }
  | { readonly type: "look"; readonly body: Node }
  | { readonly type: "backreference" }
  | { readonly type: "group"; readonly body: Node }
  | { readonly type: "sequence"; readonly items: readonly Node[] }
  | { readonly type: "alternation"; readonly items: readonly Node[] }
  | {
      readonly type: "repeat";
      readonly min: number;
      readonly max: number;
      readonly lazy: boolean;
      /** Written with braces (`{n,m}`): RE2 checks only those against its repetition limit. */
      readonly counted: boolean;
      readonly body: Node;
    };

type Node = PatternNode;

/** What the analysis tells about a pattern. */
export interface PatternShape {
  /**
   * Upper bound of V8's steps per character of the text (per start position plus per character
   * a tail repetition consumes), or Infinity when the backtracking is not bounded.
   */
  readonly stepsPerChar: number;
  /** Longest match in UTF-16 code units (Infinity when unbounded). */
  readonly maxMatchUnits: number;
  readonly lookaround: boolean;
  readonly backreference: boolean;
  /** `^` or `$` somewhere. */
  readonly anchors: boolean;
  /** Can match the empty string. */
  readonly nullable: boolean;
  /** Some atom can match `\n` or `\r`. */
  readonly matchesLineBreak: boolean;
  /**
   * Every atom matches ASCII characters only (and no word boundary when folding case, where V8
   * counts ſ and K as word characters): the pattern matches UTF-8 bytes read as Latin-1 exactly
   * where it matches the decoded text, since multi-byte characters are bytes ≥ 0x80 only.
   */
  readonly asciiOnly: boolean;
  /** The text the pattern matches, when it is a plain sequence of characters. */
  readonly literalText?: string;
  /** RE2 accepts its counted repetitions (nested counts multiply to at most 1000). */
  readonly re2Repeats: boolean;
}

/** A shape that promises nothing (a syntax the analysis does not know). */
const UNKNOWN: PatternShape = {
  stepsPerChar: Number.POSITIVE_INFINITY,
  maxMatchUnits: Number.POSITIVE_INFINITY,
  lookaround: true,
  backreference: true,
  anchors: true,
  nullable: true,
  matchesLineBreak: true,
  asciiOnly: false,
  re2Repeats: false,
};

class Unknown extends Error {}

/**
 * Deepest nesting of groups in `source` (any kind, classes and escapes skipped). Iterative, so that
 * it is safe to call before anything recursive reads the pattern.
 */
export function groupDepth(source: string): number {
  let depth = 0;
  let deepest = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x5c /* \ */) {
      i++;
    } else if (inClass) {
      if (c === 0x5d /* ] */) inClass = false;
    } else if (c === 0x5b /* [ */) {
      inClass = true;
    } else if (c === 0x28 /* ( */) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x29 /* ) */) {
      depth--;
    }
  }
  return deepest;
}

/** A recursive-descent reader of u-mode syntax (callers bound the nesting with groupDepth). */
class Parser {
  private i = 0;
  private readonly cps: number[];
  constructor(pattern: string) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0)!);
  }

  parse(): Node {
    const node = this.disjunction();
    if (this.i !== this.cps.length) throw new Unknown();
    return node;
  }

  private peek(offset = 0): string {
    const cp = this.cps[this.i + offset];
    return cp === undefined ? "" : String.fromCodePoint(cp);
  }

  private text(from: number, to: number): string {
    return String.fromCodePoint(...this.cps.slice(from, to));
  }

  private disjunction(): Node {
    const items = [this.alternative()];
    while (this.peek() === "|") {
      this.i++;
      items.push(this.alternative());
    }
    return items.length === 1 ? items[0]! : { type: "alternation", items };
  }

  private alternative(): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === "" || c === "|" || c === ")") return { type: "sequence", items };
      items.push(this.term());
    }
  }

  private term(): Node {
    const c = this.peek();
    if (c === "^" || c === "$") {
      this.i++;
      return { type: "assertion", anchor: true };
    }
    if (c === "\\" && (this.peek(1) === "b" || this.peek(1) === "B")) {
      this.i += 2;
      return { type: "assertion", anchor: false };
    }
    const atom = this.atom();
    return this.quantified(atom);
  }

  private quantified(body: Node): Node {
    const c = this.peek();
    let min: number;
    let max: number;
    let counted = false;
    if (c === "*" || c === "+" || c === "?") {
      this.i++;
      min = c === "+" ? 1 : 0;
      max = c === "?" ? 1 : Number.POSITIVE_INFINITY;
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.text(this.i, this.i + 48));
      if (!m) throw new Unknown();
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] ? Number(m[3]) : Number.POSITIVE_INFINITY;
      counted = true;
    } else return body;
    let lazy = false;
    if (this.peek() === "?") {
      this.i++;
      lazy = true;
    }
    return { type: "repeat", min, max, lazy, counted, body };
  }

  private atom(): Node {
    const start = this.i;
    const c = this.peek();
    this.i++;
    switch (c) {
      case "(":
        return this.group();
      case "[":
        this.skipClass();
        return { type: "atom", source: this.text(start, this.i) };
      case "\\":
        return this.escape(start);
      default:
        return { type: "atom", source: this.text(start, this.i) };
    }
  }

  private group(): Node {
    let look = false;
    if (this.peek() === "?") {
      const next = this.peek(1);
      if (next === ":") this.i += 2;
      else if (next === "=" || next === "!") {
        this.i += 2;
        look = true;
      } else if (next === "<" && (this.peek(2) === "=" || this.peek(2) === "!")) {
        this.i += 3;
        look = true;
      } else if (next === "<") {
        while (this.peek() !== ">" && this.peek() !== "") this.i++;
        this.i++;
      } else throw new Unknown(); // modifiers and anything newer
    }
    const body = this.disjunction();
    if (this.peek() !== ")") throw new Unknown();
    this.i++;
    return look ? { type: "look", body } : { type: "group", body };
  }

  /** After `[`: to the index after the closing `]` (u-mode classes do not nest). */
  private skipClass(): void {
    while (this.peek() !== "]") {
      if (this.peek() === "") throw new Unknown();
      if (this.peek() === "\\") this.i++;
      this.i++;
    }
    this.i++;
  }

  private escape(start: number): Node {
    const c = this.peek();
    this.i++;
    if (/[1-9]/.test(c)) {
      while (/[0-9]/.test(this.peek())) this.i++;
      return { type: "backreference" };
    }
    if (c === "k") {
      while (this.peek() !== ">" && this.peek() !== "") this.i++;
      this.i++;
      return { type: "backreference" };
    }
    if ((c === "p" || c === "P" || c === "u") && this.peek() === "{") {
      while (this.peek() !== "}" && this.peek() !== "") this.i++;
      this.i++;
    } else if (c === "u") {
      this.i += 4;
      // An escaped surrogate pair is one code point in u-mode.
      if (
        this.peek() === "\\" &&
        this.peek(1) === "u" &&
        /^[dD][c-fC-F]/.test(this.text(this.i + 2, this.i + 4))
      ) {
        this.i += 6;
      }
    } else if (c === "x") this.i += 2;
    else if (c === "c") this.i += 1;
    return { type: "atom", source: this.text(start, this.i) };
  }
}

/** Steps past which a pattern is treated as unbounded (keeps the arithmetic finite and fast). */
const STEPS_CEILING = 1e9;

interface Cost {
  /** Ways the node can complete from one position (leaves of its backtracking tree). */
  readonly paths: number;
  /** Steps to explore every one of them. */
  readonly steps: number;
  /** Per-iteration steps of a tail repetition (0 when there is none). */
  readonly loop: number;
}

const ONE: Cost = { paths: 1, steps: 1, loop: 0 };
const UNBOUNDED: Cost = {
  paths: Number.POSITIVE_INFINITY,
  steps: Number.POSITIVE_INFINITY,
  loop: 0,
};

function then(first: Cost, rest: Cost): Cost {
  const steps = first.steps + first.paths * rest.steps;
  if (!(steps <= STEPS_CEILING)) return UNBOUNDED;
  return { paths: first.paths * rest.paths, steps, loop: Math.max(first.loop, rest.loop) };
}

/** The backtracking cost of `node`; `tail`: nothing follows it in any match. */
function cost(node: Node, tail: boolean): Cost {
  switch (node.type) {
    case "atom":
    case "assertion":
      return ONE;
    case "backreference":
      return UNBOUNDED;
    case "look": {
      const body = cost(node.body, false);
      return body.steps <= STEPS_CEILING ? { paths: 1, steps: body.steps + 1, loop: 0 } : UNBOUNDED;
    }
    case "group":
      return cost(node.body, tail);
    case "sequence": {
      let acc: Cost = { paths: 1, steps: 0, loop: 0 };
      for (let k = node.items.length - 1; k >= 0; k--) {
        acc = then(cost(node.items[k]!, tail && k === node.items.length - 1), acc);
        if (acc === UNBOUNDED) return acc;
      }
      return acc;
    }
    case "alternation": {
      let paths = 0;
      let steps = 1;
      let loop = 0;
      for (const item of node.items) {
        const c = cost(item, tail);
        paths += c.paths;
        steps += c.steps;
        loop = Math.max(loop, c.loop);
      }
      return steps <= STEPS_CEILING ? { paths, steps, loop } : UNBOUNDED;
    }
    case "repeat":
      return repeatCost(node, tail);
  }
}

function repeatCost(node: Extract<Node, { type: "repeat" }>, tail: boolean): Cost {
  const body = cost(node.body, false);
  if (body === UNBOUNDED || body.loop > 0) return UNBOUNDED;
  if (node.max === Number.POSITIVE_INFINITY) {
    if (!tail) return UNBOUNDED;
    // Lazy: after `min` iterations the rest of the match (nothing) succeeds at once.
    if (node.lazy) return exactly(body, node.min, ONE);
    // Greedy, and reaching it is success: it never backtracks into its iterations, so each
    // iteration is one try of the body. A body that can match empty would end the loop by V8's
    // empty-check rule instead: not counted here.
    if (nullable(node.body)) return UNBOUNDED;
    return exactly(body, node.min, { paths: 1, steps: body.steps + 1, loop: body.steps + 1 });
  }
  // The optional part, innermost first: `(?:x(?:x…)?)?`.
  let acc: Cost = { paths: 1, steps: 1, loop: 0 };
  for (let k = 0; k < node.max - node.min; k++) {
    acc = then(body, acc);
    if (acc === UNBOUNDED) return acc;
    acc = { paths: acc.paths + 1, steps: acc.steps + 1, loop: 0 };
  }
  return exactly(body, node.min, acc);
}

/** `body` repeated `times` times, then `rest`. */
function exactly(body: Cost, times: number, rest: Cost): Cost {
  let acc = rest;
  for (let k = 0; k < times; k++) {
    acc = then(body, acc);
    if (acc === UNBOUNDED) return acc;
  }
  return acc;
}

function nullable(node: Node): boolean {
  switch (node.type) {
    case "atom":
      return false;
    case "assertion":
    case "look":
    case "backreference":
      return true;
    case "group":
      return nullable(node.body);
    case "sequence":
      return node.items.every(nullable);
    case "alternation":
      return node.items.some(nullable);
    case "repeat":
      return node.min === 0 || nullable(node.body);
  }
}

/** Longest match in UTF-16 units (an atom: one code point, two units at most). */
function maxUnits(node: Node): number {
  switch (node.type) {
    case "atom":
      return 2;
    case "assertion":
    case "look":
      return 0;
    case "backreference":
      return Number.POSITIVE_INFINITY;
    case "group":
      return maxUnits(node.body);
    case "sequence":
      return node.items.reduce((n, item) => n + maxUnits(item), 0);
    case "alternation":
      return node.items.reduce((n, item) => Math.max(n, maxUnits(item)), 0);
    case "repeat":
      return node.max === 0 ? 0 : node.max * maxUnits(node.body);
  }
}

/** Visits every node (depth-first, the caller bounds the depth). */
function visit(node: Node, f: (n: Node) => void): void {
  f(node);
  switch (node.type) {
    case "look":
    case "group":
    case "repeat":
      visit(node.body, f);
      break;
    case "sequence":
    case "alternation":
      for (const item of node.items) visit(item, f);
      break;
    default:
  }
}

/**
 * RE2's limit on counted repetitions (re2js's `repeatIsValid`): along any chain of nested `{n,m}`,
 * the largest counts (the least one when unbounded) multiply to at most 1000.
 */
function re2RepeatsValid(node: Node, budget: number): boolean {
  let left = budget;
  if (node.type === "repeat" && node.counted) {
    let m = node.max === Number.POSITIVE_INFINITY ? node.min : node.max;
    if (m === 0) return true;
    if (m > left) return false;
    if (m < 0) m = 0;
    if (m > 0) left = Math.trunc(left / m);
  }
  switch (node.type) {
    case "look":
    case "group":
    case "repeat":
      return re2RepeatsValid(node.body, left);
    case "sequence":
    case "alternation":
      return node.items.every((item) => re2RepeatsValid(item, left));
    default:
      return true;
  }
}

const PLAIN_ATOM = /^[^\\[.]$/u;
/** Identity escapes of syntax characters: `\.` is `.`. */
const ESCAPED_ATOM = /^\\[\^$\\.*+?()[\]{}|/]$/u;

/** Atoms asked of V8 per pattern at most; past it the answers are the conservative ones. */
const MAX_ATOMS_ASKED = 256;

/** The atoms of a pattern that are not plain or escaped characters (classes, class escapes…). */
function askedAtoms(node: Node): string[] | undefined {
  const found = new Set<string>();
  visit(node, (n) => {
    if (n.type === "atom" && !PLAIN_ATOM.test(n.source) && !ESCAPED_ATOM.test(n.source)) {
      found.add(n.source);
    }
  });
  return found.size <= MAX_ATOMS_ASKED ? [...found] : undefined;
}

/** A regex that matches exactly one character `atom` matches. */
function atomRegex(atom: string, flags: string): RegExp {
  return new RegExp(`^(?:${atom})$`, flags.replace(/[gym]/g, ""));
}

/** Whether some atom can match `\n` or `\r` (asked of V8 itself, with the pattern's flags). */
function matchesLineBreak(node: Node, flags: string): boolean {
  let plain = false;
  visit(node, (n) => {
    if (n.type === "atom" && (n.source === "\n" || n.source === "\r")) plain = true;
  });
  if (plain) return true;
  const asked = askedAtoms(node);
  if (asked === undefined) return true;
  return asked.some((atom) => {
    const re = atomRegex(atom, flags);
    return re.test("\n") || re.test("\r");
  });
}

let nonAscii: string | undefined;
/** Every non-ASCII code point of the BMP (surrogates excepted), once per thread. */
function nonAsciiProbe(): string {
  if (nonAscii === undefined) {
    const codes: number[] = [];
    for (let c = 0x80; c <= 0xffff; c++) if (c < 0xd800 || c > 0xdfff) codes.push(c);
    nonAscii = String.fromCharCode(...codes);
  }
  return nonAscii;
}

/** See PatternShape.asciiOnly. */
function asciiOnly(node: Node, flags: string): boolean {
  const fold = flags.includes("i");
  let ok = true;
  visit(node, (n) => {
    if (n.type === "assertion" && !n.anchor && fold) ok = false;
    if (n.type !== "atom") return;
    // Non-ASCII text, or escapes that name code points or sets beyond ASCII (`\p` can name
    // astral letters only, which the probe below would not see).
    if (/[^\x00-\x7f]|\\[uxpPsSWD]|^\.$/.test(n.source) || /^\[\^/.test(n.source)) ok = false;
    // Folding: k and s match K (U+212A) and ſ (U+017F) too.
    if (fold && PLAIN_ATOM.test(n.source) && /[ks]/i.test(n.source)) ok = false;
  });
  if (!ok) return false;
  const asked = askedAtoms(node);
  if (asked === undefined) return false;
  return asked.every((atom) => {
    const re = new RegExp(atom, flags.replace(/[gym]/g, ""));
    return !re.test(nonAsciiProbe());
  });
}

/** The text of a pattern that is a plain sequence of (possibly escaped) characters. */
function literalText(node: Node): string | undefined {
  const items = node.type === "sequence" ? node.items : [node];
  let text = "";
  for (const item of items) {
    if (item.type !== "atom") return undefined;
    if (PLAIN_ATOM.test(item.source)) text += item.source;
    else if (ESCAPED_ATOM.test(item.source)) text += item.source.slice(1);
    else return undefined;
  }
  return text.length > 0 ? text : undefined;
}

/** The syntax tree of `source` (u-mode, nesting bounded by the caller), undefined if unknown. */
export function parsePattern(source: string): PatternNode | undefined {
  try {
    return new Parser(source).parse();
  } catch (err) {
    if (err instanceof Unknown) return undefined;
    throw err;
  }
}

/**
 * Reads `source` (u-mode syntax V8 accepted with `flags`; its group nesting already bounded by the
 * caller with groupDepth) and says what it does. Anything it does not know gives a shape that
 * promises nothing.
 */
export function analyzePattern(source: string, flags: string): PatternShape {
  const root = parsePattern(source);
  if (root === undefined) return UNKNOWN;
  let lookaround = false;
  let backreference = false;
  let anchors = false;
  visit(root, (n) => {
    if (n.type === "look") lookaround = true;
    else if (n.type === "backreference") backreference = true;
    else if (n.type === "assertion" && n.anchor) anchors = true;
  });
  const c = cost(root, true);
  const literal = literalText(root);
  return {
    stepsPerChar: c === UNBOUNDED ? Number.POSITIVE_INFINITY : c.steps + c.loop,
    maxMatchUnits: c.loop > 0 ? Number.POSITIVE_INFINITY : maxUnits(root),
    lookaround,
    backreference,
    anchors,
    nullable: nullable(root),
    matchesLineBreak: matchesLineBreak(root, flags),
    asciiOnly: asciiOnly(root, flags),
    re2Repeats: re2RepeatsValid(root, 1000),
    ...(literal === undefined ? {} : { literalText: literal }),
  };
}
