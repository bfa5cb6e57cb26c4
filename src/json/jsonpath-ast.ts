/**
 * @module
 * The compiled form of a query: RFC 9535 JSONPath segments (RFC 6901 pointers compile to the same
 * shape, with `ptr` selectors).
 */

export type Selector =
  | { kind: "name"; name: string }
  | { kind: "wildcard" }
  | { kind: "index"; index: number }
  | { kind: "slice"; start: number | null; end: number | null; step: number | null }
  | { kind: "filter"; expr: LogicalExpr }
  /** An RFC 6901 reference token: a member name, or an array index when `index >= 0`. */
  | { kind: "ptr"; name: string; index: number };

export interface Segment {
  descendant: boolean;
  selectors: Selector[];
}

/** A query inside a filter: relative (`@…`) or absolute (`$…`). */
export interface FilterQuery {
  kind: "query";
  relative: boolean;
  segments: Segment[];
  /** Every segment is a child segment with one name or index selector. */
  singular: boolean;
}

export type LogicalExpr =
  | { kind: "or"; args: LogicalExpr[] }
  | { kind: "and"; args: LogicalExpr[] }
  | { kind: "not"; arg: LogicalExpr }
  | { kind: "compare"; op: CompareOp; left: Comparable; right: Comparable }
  /** Existence test of a query. */
  | { kind: "exists"; query: FilterQuery }
  /** A function used as a test (LogicalType result, or NodesType converted to logical). */
  | { kind: "test"; call: FunctionCall };

export type CompareOp = "==" | "!=" | "<" | "<=" | ">" | ">=";

export type JsonValue = null | boolean | number | string | JsonValue[] | Map<string, JsonValue>;

export type Comparable = { kind: "literal"; value: JsonValue } | FilterQuery | FunctionCall;

export type FunctionArg =
  | { kind: "literal"; value: JsonValue }
  | FilterQuery
  | FunctionCall
  | LogicalExpr;

export type FunctionType = "value" | "logical" | "nodes";

export interface FunctionCall {
  kind: "call";
  name: "length" | "count" | "match" | "search" | "value";
  args: FunctionArg[];
  result: FunctionType;
  /** For match/search with a literal pattern: the compiled regular expression. */
  regex?: unknown;
}
