/**
 * @module
 * In-memory RFC 9535 semantics used by filters: comparisons, the five standard functions, and
 * queries over materialized values. The streaming evaluator materializes only what a filter reads
 * (its {@link Projection}) and hands it here when the candidate is complete.
 *
 * Values: objects are `Map`s (member order kept, any name allowed), numbers are JS numbers
 * (comparisons are by value, as the RFC says). A candidate may be a *skeleton*: containers holding
 * only the members and elements the filter's singular paths need ({@link PartialArray} for arrays,
 * a Map with only those members for objects, {@link OPAQUE} for a present value never read).
 */

import { PagewiseError } from "../core/index.js";
import { compileIRegexp, type IRegexp } from "./iregexp.js";
import type {
  Comparable,
  FilterQuery,
  FunctionArg,
  FunctionCall,
  JsonValue,
  LogicalExpr,
  Segment,
  Selector,
} from "./jsonpath-ast.js";
import type { JsonLimits } from "./limits.js";

/** An array of which only some elements were kept; `length` is the real length. */
export class PartialArray {
  constructor(
    public length: number,
    readonly items: Map<number, Value>,
  ) {}
}

/** A value that exists but whose content no part of the filter reads. */
export const OPAQUE: unique symbol = Symbol("opaque");

export type Value = JsonValue | PartialArray | typeof OPAQUE | Map<string, Value> | Value[];

export interface EvalContext {
  limits: JsonLimits;
  /** Nodelists of absolute queries (`$…`) inside filters, computed beforehand. */
  absolute?: Map<FilterQuery, Value[]>;
  /** Steps of the `match()`/`search()` tests run so far (the query's driver yields by them). */
  regexSteps?: number;
}

// --- projection -------------------------------------------------------------------------------

/** What a filter needs of its candidate: paths of names/indexes, each either read fully or only tested for presence. */
export interface Projection {
  full: boolean;
  names: Map<string, Projection> | null;
  indexes: Map<number, Projection> | null;
}

export function newProjection(): Projection {
  return { full: false, names: null, indexes: null };
}

/** The projection of one filter expression (relative to its `@`). */
export function projectionOf(expr: LogicalExpr): Projection {
  const root = newProjection();
  addLogical(root, expr);
  return root;
}

function addLogical(root: Projection, expr: LogicalExpr): void {
  switch (expr.kind) {
    case "or":
    case "and":
      for (const a of expr.args) addLogical(root, a);
      return;
    case "not":
      addLogical(root, expr.arg);
      return;
    case "compare":
      addComparable(root, expr.left);
      addComparable(root, expr.right);
      return;
    case "exists":
      addQuery(root, expr.query, false);
      return;
    case "test":
      addCall(root, expr.call);
      return;
  }
}

function addComparable(root: Projection, c: Comparable): void {
  if (c.kind === "query") addQuery(root, c, true);
  else if (c.kind === "call") addCall(root, c);
}

function addCall(root: Projection, call: FunctionCall): void {
  for (const arg of call.args) addArg(root, arg, call.name !== "count");
}

function addArg(root: Projection, arg: FunctionArg, needValue: boolean): void {
  switch (arg.kind) {
    case "literal":
      return;
    case "query":
      addQuery(root, arg, needValue);
      return;
    case "call":
      addCall(root, arg);
      return;
    default:
      addLogical(root, arg);
  }
}

/** Marks the singular prefix of a relative query; the node where it stops is read fully when needed. */
function addQuery(root: Projection, q: FilterQuery, needValue: boolean): void {
  if (!q.relative) return;
  let node = root;
  for (const seg of q.segments) {
    if (node.full) return;
    const sel = seg.selectors[0];
    const simple =
      !seg.descendant &&
      seg.selectors.length === 1 &&
      (sel.kind === "name" || (sel.kind === "index" && sel.index >= 0));
    if (!simple) {
      node.full = true;
      return;
    }
    if (sel.kind === "name") {
      if (!node.names) node.names = new Map();
      let next = node.names.get(sel.name);
      if (!next) {
        next = newProjection();
        node.names.set(sel.name, next);
      }
      node = next;
    } else if (sel.kind === "index") {
      if (!node.indexes) node.indexes = new Map();
      let next = node.indexes.get(sel.index);
      if (!next) {
        next = newProjection();
        node.indexes.set(sel.index, next);
      }
      node = next;
    }
  }
  if (needValue) node.full = true;
}

/** Absolute queries used inside a filter expression (evaluated before the scan). */
export function absoluteQueriesOf(expr: LogicalExpr, out: FilterQuery[] = []): FilterQuery[] {
  const visitQuery = (q: FilterQuery): void => {
    if (!q.relative) out.push(q);
    for (const seg of q.segments)
      for (const sel of seg.selectors) if (sel.kind === "filter") absoluteQueriesOf(sel.expr, out);
  };
  const visitArg = (a: FunctionArg | Comparable): void => {
    if (a.kind === "query") visitQuery(a);
    else if (a.kind === "call") for (const x of a.args) visitArg(x);
    else if (a.kind !== "literal") absoluteQueriesOf(a, out);
  };
  switch (expr.kind) {
    case "or":
    case "and":
      for (const a of expr.args) absoluteQueriesOf(a, out);
      break;
    case "not":
      absoluteQueriesOf(expr.arg, out);
      break;
    case "compare":
      visitArg(expr.left);
      visitArg(expr.right);
      break;
    case "exists":
      visitQuery(expr.query);
      break;
    case "test":
      visitArg(expr.call);
      break;
  }
  return out;
}

// --- evaluation -------------------------------------------------------------------------------

export function evalLogical(expr: LogicalExpr, current: Value, ctx: EvalContext): boolean {
  switch (expr.kind) {
    case "or":
      for (const a of expr.args) if (evalLogical(a, current, ctx)) return true;
      return false;
    case "and":
      for (const a of expr.args) if (!evalLogical(a, current, ctx)) return false;
      return true;
    case "not":
      return !evalLogical(expr.arg, current, ctx);
    case "exists":
      return evalFilterQuery(expr.query, current, ctx).length > 0;
    case "test": {
      const r = evalCall(expr.call, current, ctx);
      return Array.isArray(r) ? r.length > 0 : r === true;
    }
    case "compare": {
      const a = evalComparable(expr.left, current, ctx);
      const b = evalComparable(expr.right, current, ctx);
      return compare(expr.op, a, b);
    }
  }
}

function evalFilterQuery(q: FilterQuery, current: Value, ctx: EvalContext): Value[] {
  if (!q.relative) {
    const nodes = ctx.absolute?.get(q);
    if (!nodes) throw new Error("absolute query was not evaluated beforehand");
    return nodes;
  }
  return evalSegments(q.segments, current, ctx);
}

/** Value or Nothing (undefined). */
function evalComparable(c: Comparable, current: Value, ctx: EvalContext): Value | undefined {
  if (c.kind === "literal") return c.value;
  if (c.kind === "query") {
    const nodes = evalFilterQuery(c, current, ctx);
    return nodes.length === 1 ? nodes[0] : undefined;
  }
  const r = evalCall(c, current, ctx);
  return r as Value | undefined;
}

function evalValueArg(a: FunctionArg, current: Value, ctx: EvalContext): Value | undefined {
  if (a.kind === "literal") return a.value;
  if (a.kind === "query") {
    const nodes = evalFilterQuery(a, current, ctx);
    return nodes.length === 1 ? nodes[0] : undefined;
  }
  if (a.kind === "call") return evalCall(a, current, ctx) as Value | undefined;
  return evalLogical(a, current, ctx);
}

const runtimeRegexCache = new Map<string, IRegexp | null>();

/** Returns a value (or undefined for Nothing), a boolean (logical) or a nodelist. */
function evalCall(
  call: FunctionCall,
  current: Value,
  ctx: EvalContext,
): Value | undefined | boolean | Value[] {
  switch (call.name) {
    case "length": {
      const v = evalValueArg(call.args[0], current, ctx);
      if (typeof v === "string") {
        let n = 0;
        for (let i = 0; i < v.length; i++) {
          const c = v.charCodeAt(i);
          if (
            c < 0xdc00 ||
            c > 0xdfff ||
            i === 0 ||
            !(v.charCodeAt(i - 1) >= 0xd800 && v.charCodeAt(i - 1) <= 0xdbff)
          )
            n++;
        }
        return n;
      }
      if (Array.isArray(v)) return v.length;
      if (v instanceof PartialArray) return v.length;
      if (v instanceof Map) return v.size;
      return undefined;
    }
    case "count": {
      const a = call.args[0];
      const nodes =
        a.kind === "query"
          ? evalFilterQuery(a, current, ctx)
          : (evalCall(a as FunctionCall, current, ctx) as Value[]);
      return nodes.length;
    }
    case "value": {
      const a = call.args[0];
      const nodes =
        a.kind === "query"
          ? evalFilterQuery(a, current, ctx)
          : (evalCall(a as FunctionCall, current, ctx) as Value[]);
      return nodes.length === 1 ? nodes[0] : undefined;
    }
    case "match":
    case "search": {
      const s = evalValueArg(call.args[0], current, ctx);
      const pat = evalValueArg(call.args[1], current, ctx);
      if (typeof s !== "string" || typeof pat !== "string") return false;
      let re: IRegexp | null;
      if (call.regex !== undefined) re = call.regex as IRegexp | null;
      else {
        const key = `${call.name}\u0000${pat}`;
        re = runtimeRegexCache.get(key) ?? null;
        if (!runtimeRegexCache.has(key)) {
          re = compileIRegexp(pat, call.name === "match", ctx.limits);
          if (runtimeRegexCache.size > 256) runtimeRegexCache.clear();
          runtimeRegexCache.set(key, re);
        }
      }
      if (!re) return false;
      const found = re.test(s);
      ctx.regexSteps = (ctx.regexSteps ?? 0) + re.steps;
      return found;
    }
  }
}

export function compare(op: string, a: Value | undefined, b: Value | undefined): boolean {
  switch (op) {
    case "==":
      return equal(a, b);
    case "!=":
      return !equal(a, b);
    case "<":
      return less(a, b);
    case "<=":
      return less(a, b) || equal(a, b);
    case ">":
      return less(b, a);
    case ">=":
      return less(b, a) || equal(a, b);
  }
  return false;
}

function equal(a: Value | undefined, b: Value | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  // Iterative (pairs still to compare): values may nest as deep as max_depth allows.
  const pending: (Value | undefined)[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push(x[i], y[i]);
    } else if (x instanceof Map) {
      if (!(y instanceof Map) || x.size !== y.size) return false;
      for (const [k, v] of x) {
        if (!y.has(k)) return false;
        pending.push(v as Value, y.get(k) as Value);
      }
    } else return false;
  }
  return true;
}

function less(a: Value | undefined, b: Value | undefined): boolean {
  if (typeof a === "number" && typeof b === "number") return a < b;
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b) < 0;
  return false;
}

/** Orders strings by Unicode scalar values (UTF-16 code-unit order differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

// --- queries over materialized values -----------------------------------------------------------

export function evalSegments(segments: Segment[], start: Value, ctx: EvalContext): Value[] {
  let nodes: Value[] = [start];
  for (const seg of segments) {
    const out: Value[] = [];
    for (const n of nodes) {
      if (seg.descendant) descend(n, seg.selectors, out, ctx);
      else applySelectors(n, seg.selectors, out, ctx);
    }
    nodes = out;
  }
  return nodes;
}

/** The descendant segment over `node`: its selectors applied to it and every descendant, in document order. */
function descend(node: Value, selectors: Selector[], out: Value[], ctx: EvalContext): void {
  // Iterative (a stack of nodes still to visit): values may nest as deep as max_depth allows.
  const stack: Value[] = [node];
  while (stack.length > 0) {
    const n = stack.pop() as Value;
    applySelectors(n, selectors, out, ctx);
    if (Array.isArray(n)) for (let i = n.length - 1; i >= 0; i--) stack.push(n[i]);
    else if (n instanceof Map) {
      const children = [...n.values()] as Value[];
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
}

function applySelectors(node: Value, selectors: Selector[], out: Value[], ctx: EvalContext): void {
  for (const sel of selectors) {
    switch (sel.kind) {
      case "name":
        if (node instanceof Map && node.has(sel.name)) out.push(node.get(sel.name) as Value);
        break;
      case "ptr":
        if (node instanceof Map) {
          if (node.has(sel.name)) out.push(node.get(sel.name) as Value);
        } else if (Array.isArray(node) && sel.index >= 0 && sel.index < node.length)
          out.push(node[sel.index]);
        break;
      case "wildcard":
        if (Array.isArray(node)) out.push(...node);
        else if (node instanceof Map) for (const v of node.values()) out.push(v as Value);
        break;
      case "index": {
        if (Array.isArray(node)) {
          const i = sel.index < 0 ? node.length + sel.index : sel.index;
          if (i >= 0 && i < node.length) out.push(node[i]);
        } else if (node instanceof PartialArray) {
          const i = sel.index < 0 ? node.length + sel.index : sel.index;
          const v = node.items.get(i);
          if (v !== undefined) out.push(v);
        }
        break;
      }
      case "slice":
        if (Array.isArray(node)) for (const i of sliceIndexes(sel, node.length)) out.push(node[i]);
        break;
      case "filter":
        if (Array.isArray(node)) {
          for (const c of node) if (evalLogical(sel.expr, c, ctx)) out.push(c);
        } else if (node instanceof Map) {
          for (const c of node.values())
            if (evalLogical(sel.expr, c as Value, ctx)) out.push(c as Value);
        }
        break;
    }
  }
}

/** The indexes an RFC 9535 slice selects from an array of `len` elements, in selection order. */
export function sliceIndexes(
  sel: { start: number | null; end: number | null; step: number | null },
  len: number,
): number[] {
  const step = sel.step ?? 1;
  const out: number[] = [];
  if (step === 0) return out;
  const norm = (i: number): number => (i >= 0 ? i : len + i);
  if (step > 0) {
    const lower = Math.min(Math.max(norm(sel.start ?? 0), 0), len);
    const upper = Math.min(Math.max(norm(sel.end ?? len), 0), len);
    for (let i = lower; i < upper; i += step) out.push(i);
  } else {
    const upper = Math.min(Math.max(sel.start === null ? len - 1 : norm(sel.start), -1), len - 1);
    const lower = Math.min(Math.max(sel.end === null ? -len - 1 : norm(sel.end), -1), len - 1);
    for (let i = upper; lower < i; i += step) out.push(i);
  }
  return out;
}

/** Throws when a materialized value grows past `max_filter_value_bytes`. */
export function filterValueTooLarge(
  limit: number,
  value: number,
  location?: Record<string, unknown>,
): never {
  throw new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `A filter needs a value larger than max_filter_value_bytes (${limit} bytes)`,
    {
      limit: { name: "max_filter_value_bytes", limit, value },
      hint: "Filter on smaller parts (e.g. @.id rather than @), or raise the server's limit.",
      ...(location ? { location } : {}),
    },
  );
}
