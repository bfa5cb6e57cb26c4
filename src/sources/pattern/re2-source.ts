/**
 * @module
 * Translation of a JavaScript regular expression (u-mode syntax, already accepted by V8) into RE2
 * syntax with the same meaning, or `undefined` when RE2 would read it differently or cannot run it.
 *
 * Written by hand because no library maps JavaScript semantics onto RE2's: re2js's own
 * `translateRegExp` (like the `re2` package before it) passes most syntax through, where `.`, `\s`,
 * `\b` under case folding, `\p{…}` (different Unicode tables) and lone surrogates differ. re2js
 * (linear.ts) runs what this returns. Every atom is emitted in a spelling whose RE2
 * meaning is fixed (code points as `\x{…}`, classes spelled out), and anything not on the list
 * below is routed to the JavaScript engine, which runs guarded off the request thread:
 * lookaround, backreferences, `\p{…}`, `\W`/`\S` inside a class, `\B`, `\b` when folding case,
 * a repeated sub-pattern that can match empty, repetition counts above RE2's 1000.
 */

/** RE2 refuses larger repetition counts. */
const RE2_MAX_REPEAT = 1000;

/** JavaScript's `\s`: WhiteSpace and LineTerminator code points. */
const JS_SPACE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const DIGIT_RANGES: ReadonlyArray<readonly [number, number]> = [[0x30, 0x39]];
const WORD_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** JavaScript's `.` without the s flag: anything but a line terminator. */
const DOT = "[^\\x{A}\\x{D}\\x{2028}\\x{2029}]";

class Unsupported extends Error {}

const hex = (cp: number): string => `\\x{${cp.toString(16).toUpperCase()}}`;
const rangesText = (ranges: ReadonlyArray<readonly [number, number]>): string =>
  ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");

const CONTROL_ESCAPES: Readonly<Record<string, number>> = {
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
};

/**
 * A recursive-descent reader of u-mode pattern syntax. It assumes V8 accepted the pattern with the
 * `u` flag, so it only has to recognise constructs, not report syntax errors: anything unexpected
 * throws Unsupported and the pattern goes to the JavaScript engine.
 */
class Translator {
  private i = 0;
  private readonly cps: number[];
  /** Whether the atom last read can match the empty string. */
  private nullable = false;
  constructor(
    pattern: string,
    private readonly foldCase: boolean,
  ) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0)!);
  }

  run(): string {
    const out = this.disjunction();
    if (this.i !== this.cps.length) throw new Unsupported();
    return out;
  }

  private peek(offset = 0): string {
    const cp = this.cps[this.i + offset];
    return cp === undefined ? "" : String.fromCodePoint(cp);
  }

  /** Leaves `nullable` set when some alternative can match empty. */
  private disjunction(): string {
    let out = this.alternative();
    let nullable = this.nullable;
    while (this.peek() === "|") {
      this.i++;
      out += `|${this.alternative()}`;
      nullable ||= this.nullable;
    }
    this.nullable = nullable;
    return out;
  }

  /** Leaves `nullable` set when every term can match empty. */
  private alternative(): string {
    let out = "";
    let nullable = true;
    for (;;) {
      const c = this.peek();
      if (c === "" || c === "|" || c === ")") {
        this.nullable = nullable;
        return out;
      }
      out += this.term();
      nullable &&= this.nullable;
    }
  }

  private term(): string {
    const c = this.peek();
    if (c === "^" || c === "$") {
      this.i++;
      this.nullable = true;
      return c;
    }
    if (c === "\\" && (this.peek(1) === "b" || this.peek(1) === "B")) {
      // RE2's word boundary is ASCII; JavaScript's folds ſ and K into words when ignoring case.
      // V8 also tries \B between the halves of a surrogate pair, where RE2 never looks.
      if (this.foldCase || this.peek(1) === "B") throw new Unsupported();
      this.i += 2;
      this.nullable = true;
      return `\\${this.peek(-1)}`;
    }
    const atom = this.atom();
    const quantifier = this.quantifier();
    // A repeated sub-pattern that can match empty: V8 and RE2 end such loops by different rules
    // (e.g. (?:a??)* on "a" is "a" in V8, "" in RE2).
    if (quantifier !== "" && this.nullable) throw new Unsupported();
    if (quantifier !== "") this.nullable = /^[*?]|^\{0[,}]/.test(quantifier);
    return atom + quantifier;
  }

  private quantifier(): string {
    const c = this.peek();
    let q = "";
    if (c === "*" || c === "+" || c === "?") {
      this.i++;
      q = c;
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(
        String.fromCodePoint(...this.cps.slice(this.i, this.i + 24)),
      );
      if (!m) throw new Unsupported();
      const min = Number(m[1]);
      const max = m[3] ? Number(m[3]) : min;
      if (min > RE2_MAX_REPEAT || max > RE2_MAX_REPEAT) throw new Unsupported();
      this.i += m[0].length;
      q = m[2] === undefined ? `{${min}}` : m[3] ? `{${min},${max}}` : `{${min},}`;
    } else return "";
    if (this.peek() === "?") {
      this.i++;
      q += "?";
    }
    return q;
  }

  private atom(): string {
    const c = this.peek();
    this.i++;
    this.nullable = false;
    switch (c) {
      case ".":
        return DOT;
      case "(":
        return this.group();
      case "[":
        return this.characterClass();
      case "\\":
        return this.atomEscape();
      default:
        return this.literal(this.cps[this.i - 1]!);
    }
  }

  private literal(cp: number): string {
    // Lone surrogates cannot occur in valid UTF-8 text, and RE2 cannot spell them.
    if (cp >= 0xd800 && cp <= 0xdfff) throw new Unsupported();
    return hex(cp);
  }

  private group(): string {
    if (this.peek() === "?") {
      if (this.peek(1) === ":") {
        this.i += 2;
      } else if (this.peek(1) === "<" && this.peek(2) !== "=" && this.peek(2) !== "!") {
        // A named group: only the whole match is used, so a plain group means the same.
        while (this.peek() !== ">" && this.peek() !== "") this.i++;
        this.i++;
      } else throw new Unsupported(); // lookaround, modifiers
      const body = this.disjunction();
      if (this.peek() !== ")") throw new Unsupported();
      this.i++;
      return `(?:${body})`;
    }
    const body = this.disjunction();
    if (this.peek() !== ")") throw new Unsupported();
    this.i++;
    return `(?:${body})`; // disjunction() left `nullable` for the group
  }

  private atomEscape(): string {
    const c = this.peek();
    switch (c) {
      case "d":
        this.i++;
        return `[${rangesText(DIGIT_RANGES)}]`;
      case "D":
        this.i++;
        return `[^${rangesText(DIGIT_RANGES)}]`;
      case "w":
        this.i++;
        return `[${rangesText(WORD_RANGES)}]`;
      case "W":
        this.i++;
        return `[^${rangesText(WORD_RANGES)}]`;
      case "s":
        this.i++;
        return `[${rangesText(JS_SPACE_RANGES)}]`;
      case "S":
        this.i++;
        return `[^${rangesText(JS_SPACE_RANGES)}]`;
      default:
        return this.literal(this.characterEscape());
    }
  }

  /** A CharacterEscape's code point (after the backslash); backreferences and \p are refused. */
  private characterEscape(): number {
    const c = this.peek();
    this.i++;
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) return control;
    if (c === "c") {
      const letter = this.cps[this.i++]!;
      return letter % 32;
    }
    if (c === "0" && !/[0-9]/.test(this.peek())) return 0;
    if (c === "x") {
      const h = String.fromCodePoint(...this.cps.slice(this.i, this.i + 2));
      this.i += 2;
      return Number.parseInt(h, 16);
    }
    if (c === "u") return this.unicodeEscape();
    if (/[\^$\\.*+?()[\]{}|/-]/.test(c)) return c.codePointAt(0)!;
    // Backreferences (\1, \k<name>), \p{…} and anything else: not translated.
    throw new Unsupported();
  }

  private unicodeEscape(): number {
    if (this.peek() === "{") {
      const end = this.cps.indexOf(0x7d, this.i);
      const cp = Number.parseInt(String.fromCodePoint(...this.cps.slice(this.i + 1, end)), 16);
      this.i = end + 1;
      return cp;
    }
    const read4 = (): number => {
      const h = String.fromCodePoint(...this.cps.slice(this.i, this.i + 4));
      this.i += 4;
      return Number.parseInt(h, 16);
    };
    const first = read4();
    // In u-mode, an escaped surrogate pair is one code point.
    if (first >= 0xd800 && first <= 0xdbff && this.peek() === "\\" && this.peek(1) === "u") {
      const save = this.i;
      this.i += 2;
      if (/^[0-9a-fA-F]{4}$/.test(String.fromCodePoint(...this.cps.slice(this.i, this.i + 4)))) {
        const second = read4();
        if (second >= 0xdc00 && second <= 0xdfff) {
          return 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
        }
      }
      this.i = save;
    }
    return first;
  }

  private characterClass(): string {
    let negate = false;
    if (this.peek() === "^") {
      negate = true;
      this.i++;
    }
    let body = "";
    while (this.peek() !== "]") {
      if (this.peek() === "") throw new Unsupported();
      const low = this.classAtom();
      if (typeof low !== "number") {
        body += low;
        continue;
      }
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== "") {
        this.i++;
        const high = this.classAtom();
        if (typeof high !== "number") throw new Unsupported();
        if (high >= 0xd800 && low <= 0xdfff) {
          // A range over the surrogate block: RE2 holds scalar values only; split around it.
          if (low < 0xd800) body += `${hex(low)}-${hex(0xd7ff)}`;
          if (high > 0xdfff) body += `${hex(Math.max(low, 0xe000))}-${hex(high)}`;
          continue;
        }
        body += `${hex(low)}-${hex(high)}`;
      } else {
        if (low >= 0xd800 && low <= 0xdfff) continue; // never in valid text
        body += hex(low);
      }
    }
    this.i++;
    // RE2 refuses an empty class; JavaScript's [] matches nothing and [^] anything.
    if (body === "") return negate ? "[\\x{0}-\\x{10FFFF}]" : "[^\\x{0}-\\x{10FFFF}]";
    return `[${negate ? "^" : ""}${body}]`;
  }

  /** A code point, or the text of a class escape to splice into the class. */
  private classAtom(): number | string {
    const c = this.peek();
    this.i++;
    if (c !== "\\") return this.cps[this.i - 1]!;
    const e = this.peek();
    if (e === "d" || e === "w" || e === "s") {
      this.i++;
      return rangesText(e === "d" ? DIGIT_RANGES : e === "w" ? WORD_RANGES : JS_SPACE_RANGES);
    }
    if (e === "D") {
      this.i++;
      return `${hex(0)}-${hex(0x2f)}${hex(0x3a)}-${hex(0x10ffff)}`;
    }
    // \W and \S inside a class fold differently in RE2; \b in a class is a backspace.
    if (e === "b") {
      this.i++;
      return 0x08;
    }
    if (e === "W" || e === "S") throw new Unsupported();
    return this.characterEscape();
  }
}

/**
 * The RE2 spelling of `pattern` (JavaScript u-mode syntax) with the same matches, or undefined
 * when it has no such spelling here. `foldCase`: the pattern is matched ignoring case.
 */
export function toRe2Source(pattern: string, foldCase: boolean): string | undefined {
  try {
    return new Translator(pattern, foldCase).run();
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

/**
 * How large RE2's program for `re2Source` (as `toRe2Source` spells it) can be, within a small
 * factor: an atom or an assertion counts 1, `|` and `*`/`+`/`?` one instruction more, a group the
 * sum of what it holds, and a counted repetition copies what it repeats as many times as its
 * largest count. When RE2's automaton outgrows its memory it steps through the program for every
 * character, so weight × text length bounds one test's work: `(a|aa){0,500}z` weighs about 2,500
 * and takes 30 s over a MiB of `a`.
 */
export function re2Weight(re2Source: string): number {
  const groups: number[] = [0];
  let last = 0;
  const add = (weight: number): void => {
    groups[groups.length - 1]! += weight;
  };
  for (let i = 0; i < re2Source.length; ) {
    const c = re2Source[i]!;
    if (c === "\\") {
      // `\x{…}` or a one-letter escape (`\b`, `\B`).
      i = re2Source[i + 1] === "x" ? re2Source.indexOf("}", i) + 1 : i + 2;
      last = 1;
      add(1);
    } else if (c === "[") {
      // A class holds no `]` but its end: code points are spelled `\x{…}`.
      i = re2Source.indexOf("]", i + 1) + 1;
      last = 1;
      add(1);
    } else if (c === "(") {
      groups.push(0);
      i += re2Source.startsWith("(?:", i) ? 3 : 1;
    } else if (c === ")") {
      last = groups.pop()!;
      add(last);
      i++;
    } else if (c === "{") {
      const end = re2Source.indexOf("}", i);
      const counts = re2Source.slice(i + 1, end).split(",");
      const most = counts[1] === undefined ? Number(counts[0]) : Number(counts[1] || counts[0]) + 1;
      add(last * (Math.max(most, 1) - 1) + most);
      last *= Math.max(most, 1);
      i = end + 1;
    } else {
      // `|`, `*`, `+`, `?`, `^`, `$`, `.`: one instruction.
      add(1);
      i++;
    }
  }
  return Math.max(1, groups[0]!);
}
