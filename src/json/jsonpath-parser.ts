/**
 * @module
 * RFC 9535 JSONPath parser: query text → {@link Segment} list, with the RFC's well-typedness rules
 * for filter expressions and function extensions (length, count, match, search, value).
 * Errors are `QUERY_SYNTAX_ERROR` with `location: {position, column}` (0-based UTF-16 position,
 * 1-based column) into the query.
 */

import { PagewiseError } from "../core/index.js";
import { compileIRegexp } from "./iregexp.js";
import type {
  Comparable,
  CompareOp,
  FilterQuery,
  FunctionArg,
  FunctionCall,
  FunctionType,
  JsonValue,
  LogicalExpr,
  Segment,
  Selector,
} from "./jsonpath-ast.js";
import type { JsonLimits } from "./limits.js";

const MAX_SAFE = 2 ** 53 - 1;

/** A Map, not an object literal: a query naming "constructor" must find no function. */
const FUNCTIONS: ReadonlyMap<string, { params: FunctionType[]; result: FunctionType }> = new Map([
  ["length", { params: ["value"], result: "value" }],
  ["count", { params: ["nodes"], result: "value" }],
  ["match", { params: ["value", "value"], result: "logical" }],
  ["search", { params: ["value", "value"], result: "logical" }],
  ["value", { params: ["nodes"], result: "value" }],
]);

export function parseJsonPath(query: string, limits: JsonLimits): Segment[] {
  const p = new Parser(query, limits);
  return p.parseQuery();
}

const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;

class Parser {
  pos = 0;
  /** Filters, parentheses and function calls open around the current position. */
  nesting = 0;
  constructor(
    readonly src: string,
    readonly limits: JsonLimits,
  ) {}

  fail(message: string, at = this.pos): never {
    throw new PagewiseError("QUERY_SYNTAX_ERROR", `Invalid JSONPath: ${message}`, {
      location: { position: at, column: at + 1 },
      hint: "JSONPath follows RFC 9535, e.g. $.store.book[0].title, $..price, $.items[?@.price < 10].",
    });
  }

  /**
   * Enters a nested filter, parenthesis or function call. The parser (and every later pass over the
   * expression) recurses once per level, so the depth is bounded before the stack is.
   */
  enter(at: number): void {
    if (++this.nesting <= this.limits.maxQueryNesting) return;
    const limit = this.limits.maxQueryNesting;
    throw new PagewiseError(
      "RESOURCE_LIMIT_EXCEEDED",
      `The JSONPath nests filters, parentheses and function calls too deeply: max_query_nesting is ${limit}`,
      {
        limit: { name: "max_query_nesting", limit, value: this.nesting },
        location: { position: at, column: at + 1 },
        hint: "Flatten the query: combine conditions with && and || rather than nesting them.",
      },
    );
  }

  leave(): void {
    this.nesting--;
  }

  peek(offset = 0): string {
    return this.src.charAt(this.pos + offset);
  }

  eof(): boolean {
    return this.pos >= this.src.length;
  }

  skipWs(): void {
    while (!this.eof()) {
      const c = this.src.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else break;
    }
  }

  expect(ch: string): void {
    if (this.peek() !== ch)
      this.fail(`expected '${ch}'${this.eof() ? " but the query ended" : ` at '${this.peek()}'`}`);
    this.pos++;
  }

  parseQuery(): Segment[] {
    if (this.peek() !== "$") this.fail("a query must start with '$'");
    this.pos++;
    const segments = this.parseSegments();
    if (!this.eof()) this.fail(`unexpected '${this.peek()}'`);
    return segments;
  }

  /** Segments until something that cannot continue them (whitespace before a segment is allowed). */
  parseSegments(): Segment[] {
    const segments: Segment[] = [];
    for (;;) {
      const save = this.pos;
      this.skipWs();
      const c = this.peek();
      if (c === "." || c === "[") {
        segments.push(this.parseSegment());
        continue;
      }
      this.pos = save;
      return segments;
    }
  }

  parseSegment(): Segment {
    if (this.peek() === "[") return { descendant: false, selectors: this.parseBracketed() };
    // '.'
    this.pos++;
    if (this.peek() === ".") {
      this.pos++;
      const c = this.peek();
      if (c === "[") return { descendant: true, selectors: this.parseBracketed() };
      if (c === "*") {
        this.pos++;
        return { descendant: true, selectors: [{ kind: "wildcard" }] };
      }
      if (this.isNameFirst())
        return { descendant: true, selectors: [{ kind: "name", name: this.parseShorthand() }] };
      this.fail("'..' must be followed by a name, '*' or '['");
    }
    const c = this.peek();
    if (c === "*") {
      this.pos++;
      return { descendant: false, selectors: [{ kind: "wildcard" }] };
    }
    if (this.isNameFirst())
      return { descendant: false, selectors: [{ kind: "name", name: this.parseShorthand() }] };
    this.fail("'.' must be followed by a member name or '*'");
  }

  isNameFirst(): boolean {
    if (this.eof()) return false;
    const c = this.src.charCodeAt(this.pos);
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f) return true;
    if (c < 0x80) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = this.src.charCodeAt(this.pos + 1);
      return d >= 0xdc00 && d <= 0xdfff;
    }
    return !(c >= 0xdc00 && c <= 0xdfff);
  }

  parseShorthand(): string {
    const start = this.pos;
    while (!this.eof()) {
      const c = this.src.charCodeAt(this.pos);
      if (this.isNameFirst() || (c >= 0x30 && c <= 0x39)) {
        this.pos += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
      } else break;
    }
    return this.src.slice(start, this.pos);
  }

  parseBracketed(): Selector[] {
    this.expect("[");
    const selectors: Selector[] = [];
    for (;;) {
      this.skipWs();
      selectors.push(this.parseSelector());
      this.skipWs();
      if (this.peek() === ",") {
        this.pos++;
        continue;
      }
      if (this.peek() === "]") {
        this.pos++;
        return selectors;
      }
      this.fail(this.eof() ? "unclosed '['" : `expected ',' or ']' at '${this.peek()}'`);
    }
  }

  parseSelector(): Selector {
    const c = this.peek();
    if (c === "'" || c === '"') return { kind: "name", name: this.parseStringLiteral() };
    if (c === "*") {
      this.pos++;
      return { kind: "wildcard" };
    }
    if (c === "?") {
      this.enter(this.pos);
      this.pos++;
      this.skipWs();
      const expr = this.parseLogicalOr();
      this.leave();
      return { kind: "filter", expr };
    }
    if (c === ":" || c === "-" || (c >= "0" && c <= "9")) {
      let start: number | null = null;
      if (c !== ":") {
        start = this.parseInt();
        this.skipWs();
        if (this.peek() !== ":") return { kind: "index", index: start };
      }
      this.pos++; // ':'
      this.skipWs();
      let end: number | null = null;
      let step: number | null = null;
      if (this.peek() === "-" || (this.peek() >= "0" && this.peek() <= "9")) {
        end = this.parseInt();
        this.skipWs();
      }
      if (this.peek() === ":") {
        this.pos++;
        this.skipWs();
        if (this.peek() === "-" || (this.peek() >= "0" && this.peek() <= "9"))
          step = this.parseInt();
      }
      return { kind: "slice", start, end, step };
    }
    if (this.eof()) this.fail("unclosed '['");
    this.fail(`unexpected '${c}' in a selector`);
  }

  parseInt(): number {
    const start = this.pos;
    if (this.peek() === "-") this.pos++;
    const digitsStart = this.pos;
    while (this.peek() >= "0" && this.peek() <= "9") this.pos++;
    const text = this.src.slice(start, this.pos);
    const digits = this.src.slice(digitsStart, this.pos);
    if (digits.length === 0) this.fail("expected an integer", start);
    if (digits.length > 1 && digits[0] === "0") this.fail("leading zeros are not allowed", start);
    if (text === "-0") this.fail("-0 is not a valid index", start);
    const value = Number(text);
    if (!Number.isSafeInteger(value) || Math.abs(value) > MAX_SAFE)
      this.fail("integer out of range (±2^53-1)", start);
    return value;
  }

  parseStringLiteral(): string {
    const quote = this.peek();
    const start = this.pos;
    this.pos++;
    let out = "";
    for (;;) {
      if (this.eof()) this.fail("unterminated string", start);
      const ch = this.src.charCodeAt(this.pos);
      if (ch === quote.charCodeAt(0)) {
        this.pos++;
        return out;
      }
      if (ch < 0x20) this.fail("control characters must be escaped in strings");
      if (ch === 0x5c) {
        const e = this.src.charAt(this.pos + 1);
        this.pos += 2;
        switch (e) {
          case "b":
            out += "\b";
            break;
          case "f":
            out += "\f";
            break;
          case "n":
            out += "\n";
            break;
          case "r":
            out += "\r";
            break;
          case "t":
            out += "\t";
            break;
          case "/":
          case "\\":
            out += e;
            break;
          case "'":
          case '"':
            if (e !== quote) this.fail(`invalid escape '\\${e}'`, this.pos - 2);
            out += e;
            break;
          case "u": {
            const u = this.parseHex4();
            if (u >= 0xdc00 && u <= 0xdfff) this.fail("lone low surrogate escape", this.pos - 6);
            if (u >= 0xd800 && u <= 0xdbff) {
              if (this.src.charAt(this.pos) !== "\\" || this.src.charAt(this.pos + 1) !== "u") {
                this.fail("lone high surrogate escape", this.pos - 6);
              }
              this.pos += 2;
              const low = this.parseHex4();
              if (low < 0xdc00 || low > 0xdfff)
                this.fail("invalid low surrogate escape", this.pos - 6);
              out += String.fromCharCode(u, low);
            } else out += String.fromCharCode(u);
            break;
          }
          default:
            this.fail(`invalid escape '\\${e}'`, this.pos - 2);
        }
        continue;
      }
      if (ch >= 0xd800 && ch <= 0xdbff) {
        const d = this.src.charCodeAt(this.pos + 1);
        if (!(d >= 0xdc00 && d <= 0xdfff)) this.fail("lone surrogate in string");
        out += this.src.slice(this.pos, this.pos + 2);
        this.pos += 2;
        continue;
      }
      if (ch >= 0xdc00 && ch <= 0xdfff) this.fail("lone surrogate in string");
      out += this.src.charAt(this.pos);
      this.pos++;
    }
  }

  parseHex4(): number {
    const hex = this.src.slice(this.pos, this.pos + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("\\u must be followed by four hexadecimal digits");
    this.pos += 4;
    return Number.parseInt(hex, 16);
  }

  // --- filter expressions --------------------------------------------------------------------

  parseLogicalOr(): LogicalExpr {
    const args = [this.parseLogicalAnd()];
    for (;;) {
      const save = this.pos;
      this.skipWs();
      if (this.src.startsWith("||", this.pos)) {
        this.pos += 2;
        this.skipWs();
        args.push(this.parseLogicalAnd());
      } else {
        this.pos = save;
        break;
      }
    }
    return args.length === 1 ? args[0] : { kind: "or", args };
  }

  parseLogicalAnd(): LogicalExpr {
    const args = [this.parseBasic()];
    for (;;) {
      const save = this.pos;
      this.skipWs();
      if (this.src.startsWith("&&", this.pos)) {
        this.pos += 2;
        this.skipWs();
        args.push(this.parseBasic());
      } else {
        this.pos = save;
        break;
      }
    }
    return args.length === 1 ? args[0] : { kind: "and", args };
  }

  parseBasic(): LogicalExpr {
    const start = this.pos;
    if (this.peek() === "!") {
      this.pos++;
      this.skipWs();
      if (this.peek() === "(") {
        return { kind: "not", arg: this.parseParen() };
      }
      const inner = this.parseTestOnly();
      return { kind: "not", arg: inner };
    }
    if (this.peek() === "(") return this.parseParen();
    return this.finishBasic(this.parseComparableOrTest(), start);
  }

  /** A comparison whose left side is `left`, or `left` as a test. */
  finishBasic(left: Comparable, start: number): LogicalExpr {
    const save = this.pos;
    this.skipWs();
    const op = this.parseCompareOp();
    if (op) {
      this.skipWs();
      const right = this.parseComparable();
      return { kind: "compare", op, left: this.asComparable(left, start), right };
    }
    this.pos = save;
    return this.asTest(left, start);
  }

  parseParen(): LogicalExpr {
    this.enter(this.pos);
    this.expect("(");
    this.skipWs();
    const expr = this.parseLogicalOr();
    this.skipWs();
    this.expect(")");
    this.leave();
    return expr;
  }

  /** After '!': a filter query or a function (a test), never a comparison. */
  parseTestOnly(): LogicalExpr {
    const start = this.pos;
    const item = this.parseComparableOrTest();
    const save = this.pos;
    this.skipWs();
    if (this.parseCompareOp())
      this.fail("a comparison cannot be negated without parentheses", start);
    this.pos = save;
    return this.asTest(item, start);
  }

  parseCompareOp(): CompareOp | null {
    for (const op of ["==", "!=", "<=", ">=", "<", ">"] as const) {
      if (this.src.startsWith(op, this.pos)) {
        this.pos += op.length;
        return op;
      }
    }
    return null;
  }

  parseComparable(): Comparable {
    const start = this.pos;
    return this.asComparable(this.parseComparableOrTest(), start);
  }

  /** A literal, a filter query or a function call. */
  parseComparableOrTest(): Comparable {
    const c = this.peek();
    if (c === "@" || c === "$") return this.parseFilterQuery();
    if (c === "'" || c === '"') return { kind: "literal", value: this.parseStringLiteral() };
    if (c === "-" || (c >= "0" && c <= "9")) return { kind: "literal", value: this.parseNumber() };
    if (this.src.startsWith("true", this.pos) && !this.isFunctionNameChar(this.pos + 4)) {
      this.pos += 4;
      return { kind: "literal", value: true };
    }
    if (this.src.startsWith("false", this.pos) && !this.isFunctionNameChar(this.pos + 5)) {
      this.pos += 5;
      return { kind: "literal", value: false };
    }
    if (this.src.startsWith("null", this.pos) && !this.isFunctionNameChar(this.pos + 4)) {
      this.pos += 4;
      return { kind: "literal", value: null };
    }
    if (c >= "a" && c <= "z") return this.parseFunction();
    if (this.eof()) this.fail("the filter expression ended early");
    this.fail(`unexpected '${c}' in a filter expression`);
  }

  isFunctionNameChar(at: number): boolean {
    const c = this.src.charAt(at);
    return (c >= "a" && c <= "z") || c === "_" || (c >= "0" && c <= "9");
  }

  parseNumber(): number {
    const start = this.pos;
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.src);
    if (!m) this.fail("invalid number");
    const text = m[0];
    if (text.startsWith("-0") && text.length === 2) {
      // "-0" is a valid number literal (RFC 9535: number = (int / "-0") [frac] [exp]).
    }
    this.pos += text.length;
    const next = this.peek();
    if ((next >= "0" && next <= "9") || next === ".") this.fail("invalid number", start);
    return Number(text);
  }

  parseFilterQuery(): FilterQuery {
    const relative = this.peek() === "@";
    this.pos++;
    const segments = this.parseSegments();
    const singular = segments.every(
      (s) =>
        !s.descendant &&
        s.selectors.length === 1 &&
        (s.selectors[0].kind === "name" || s.selectors[0].kind === "index"),
    );
    return { kind: "query", relative, segments, singular };
  }

  parseFunction(): FunctionCall {
    const start = this.pos;
    while (this.isFunctionNameChar(this.pos)) this.pos++;
    const name = this.src.slice(start, this.pos);
    if (this.peek() !== "(")
      this.fail(`unexpected '${name}' (literals are true, false and null)`, start);
    const def = FUNCTIONS.get(name);
    if (!def) {
      throw new PagewiseError(
        "QUERY_SYNTAX_ERROR",
        `Invalid JSONPath: unknown function '${name}'`,
        {
          location: { position: start, column: start + 1 },
          hint: "Supported functions: length, count, match, search, value.",
        },
      );
    }
    this.enter(start);
    this.pos++;
    this.skipWs();
    const args: FunctionArg[] = [];
    if (this.peek() !== ")") {
      for (;;) {
        args.push(this.parseFunctionArg(def.params[args.length] ?? "value", args.length));
        this.skipWs();
        if (this.peek() === ",") {
          this.pos++;
          this.skipWs();
          continue;
        }
        break;
      }
    }
    this.expect(")");
    this.leave();
    if (args.length !== def.params.length) {
      this.fail(
        `${name}() takes ${def.params.length} argument${def.params.length === 1 ? "" : "s"}`,
        start,
      );
    }
    const call: FunctionCall = {
      kind: "call",
      name: name as FunctionCall["name"],
      args,
      result: def.result,
    };
    if (
      (name === "match" || name === "search") &&
      args[1].kind === "literal" &&
      typeof args[1].value === "string"
    ) {
      call.regex = compileIRegexp(args[1].value, name === "match", this.limits);
    }
    return call;
  }

  /**
   * A function argument (RFC 9535 §2.4.1): a literal, a filter query or a function call standing
   * alone (`length(value(@.a))`: any result type, checked against the parameter), or else a logical
   * expression (`count(…) > 0`, `@.a && @.b`).
   */
  parseFunctionArg(type: FunctionType, index: number): FunctionArg {
    const start = this.pos;
    const c = this.peek();
    const standsAlone =
      c === "'" ||
      c === '"' ||
      c === "-" ||
      (c >= "0" && c <= "9") ||
      c === "@" ||
      c === "$" ||
      (c >= "a" && c <= "z");
    if (standsAlone) {
      const item = this.parseComparableOrTest();
      const save = this.pos;
      this.skipWs();
      const next = this.peek();
      this.pos = save;
      if (next === "," || next === ")") return this.checkArg(item, type, index, start);
      // Perf: the item begins a logical expression; it is not parsed again (nested arguments would
      // make that exponential in the depth).
      const first = this.finishBasic(item, start);
      return this.checkArg(this.continueLogicalOr(first), type, index, start);
    }
    return this.checkArg(this.parseLogicalOr(), type, index, start);
  }

  /** The rest of a logical-or expression whose first basic expression is `first`. */
  continueLogicalOr(first: LogicalExpr): LogicalExpr {
    const and = [first];
    for (;;) {
      const save = this.pos;
      this.skipWs();
      if (this.src.startsWith("&&", this.pos)) {
        this.pos += 2;
        this.skipWs();
        and.push(this.parseBasic());
      } else {
        this.pos = save;
        break;
      }
    }
    const or = [and.length === 1 ? and[0] : ({ kind: "and", args: and } as LogicalExpr)];
    for (;;) {
      const save = this.pos;
      this.skipWs();
      if (this.src.startsWith("||", this.pos)) {
        this.pos += 2;
        this.skipWs();
        or.push(this.parseLogicalAnd());
      } else {
        this.pos = save;
        break;
      }
    }
    return or.length === 1 ? or[0] : { kind: "or", args: or };
  }

  checkArg(arg: FunctionArg, type: FunctionType, index: number, at: number): FunctionArg {
    const ordinal = ["first", "second", "third"][index] ?? `#${index + 1}`;
    switch (type) {
      case "value":
        if (arg.kind === "literal") return arg;
        if (arg.kind === "query") {
          if (!arg.singular)
            this.fail(`the ${ordinal} argument must be a single value (a singular query)`, at);
          return arg;
        }
        if (arg.kind === "call") {
          if (arg.result !== "value")
            this.fail(`the ${ordinal} argument must be a value, not a ${arg.result} function`, at);
          return arg;
        }
        this.fail(`the ${ordinal} argument must be a value, not a logical expression`, at);
        break;
      case "logical":
        if (arg.kind === "literal")
          this.fail(`the ${ordinal} argument must be a logical expression`, at);
        if (arg.kind === "call" && arg.result === "value")
          this.fail(`the ${ordinal} argument must be logical`, at);
        return arg;
      case "nodes":
        if (arg.kind === "query") return arg;
        if (arg.kind === "call" && arg.result === "nodes") return arg;
        this.fail(`the ${ordinal} argument must be a query (a nodelist)`, at);
    }
    return arg;
  }

  asComparable(item: Comparable, at: number): Comparable {
    if (item.kind === "query" && !item.singular) {
      this.fail("only singular queries (names and indexes) can be compared", at);
    }
    if (item.kind === "call" && item.result !== "value") {
      this.fail(
        `${item.name}() cannot be compared (it returns a ${item.result === "logical" ? "logical" : "nodelist"} result)`,
        at,
      );
    }
    return item;
  }

  asTest(item: Comparable, at: number): LogicalExpr {
    if (item.kind === "literal")
      this.fail("a literal alone is not a test; compare it with ==, <, …", at);
    if (item.kind === "query") return { kind: "exists", query: item };
    if (item.result === "value")
      this.fail(`${item.name}() returns a value; compare it (e.g. ${item.name}(…) > 0)`, at);
    return { kind: "test", call: item };
  }
}

export type { JsonValue };
