/**
 * @module
 * The source contract: what a source of pages declares, and the one pipeline that runs any source.
 *
 * A source (a text file, a directory listing, a search, a log tail, a JSON query) turns its
 * arguments — or a cursor — into one page of JSON text that fits the budget. What every source
 * needs around that is written here once:
 *
 * 1. the cursor is decoded and verified (MAC over tool and caller), its page parameters read;
 * 2. the cursor's page parameters are merged with the call's (a value passed with the cursor
 *    overrides it for that page), then lowered to their caps, each lowering reported once;
 * 3. arguments that a cursor fixes (the query, the range) are checked against it: a different value
 *    is INVALID_ARGUMENT, the same value is allowed;
 * 4. the source builds the page (open through access, version, collect, fit, render), and every
 *    continuation it hands out is encoded by the pipeline with the page's parameters in it, so a
 *    cursor alone continues with the same budget and limits.
 *
 * Cursor layout (inside the codec's signed frame): a byte whose bit i says that page parameter i
 * differs from its default, the varints of those parameters in the order the source declares
 * them, then the source's own payload. A parameter left at its default costs no byte. The budget
 * (`max_tokens`) is the exception: its bit is set, but the codec writes it after the bytes, in
 * digits whose cost does not depend on the value (see codec.ts), so that whether a budget returns
 * a page does not depend on the random look of its own cursor.
 */
import type { ByteReader, ByteWriter } from "../cursor/bytes.js";
import { malformedCursor, ByteWriter as Writer } from "../cursor/bytes.js";
import type { CursorCodec } from "../cursor/codec.js";
import { PagewiseError } from "../errors.js";
import { smallestPageRecount } from "../fit/fit.js";
import type { WalkReserve } from "../fit/walk-reserve.js";
import {
  DEFAULT_MAX_TOKENS,
  WALK_RESERVE_TOKENS,
  WALK_RESERVE_TOKENS_PER_CURSOR,
} from "../limits.js";

/** A numeric page parameter (budget, items per page, per-item clamp) that cursors carry. */
export interface PageParam {
  /** The argument's published name: `max_tokens`, `limit`, `max_items`, … */
  readonly name: string;
  /** Applied when neither the call nor its cursor gives a value. */
  readonly default: number;
  /** Larger values are lowered to this, and the page says so. */
  readonly max: number;
  /** Why the maximum exists, in the note of a lowered value ("the server's cap"). */
  readonly maxReason?: string;
}

/**
 * The budget parameter every cursor carries. Its default and cap are the server's: a source is
 * created with `{...MAX_TOKENS_PARAM, default, max}` from the server's settings.
 */
export const MAX_TOKENS_PARAM: PageParam = {
  name: "max_tokens",
  default: DEFAULT_MAX_TOKENS,
  max: Number.MAX_SAFE_INTEGER,
};

/** A parameter that was lowered to its maximum on this page. */
export interface Lowered {
  readonly name: string;
  readonly requested: number;
  readonly applied: number;
  readonly reason: string;
}

export interface ResolvedParams {
  /** The applied value of each parameter, by name. */
  readonly values: Readonly<Record<string, number>>;
  readonly lowered: readonly Lowered[];
}

/**
 * The applied parameters of one page: the call's value, else the cursor's, else the default;
 * lowered to the maximum (reported).
 */
export function resolvePageParams(
  specs: readonly PageParam[],
  given: Readonly<Record<string, number | undefined>>,
  fromCursor?: readonly (number | undefined)[],
): ResolvedParams {
  const values: Record<string, number> = {};
  const lowered: Lowered[] = [];
  specs.forEach((spec, i) => {
    const requested = given[spec.name] ?? fromCursor?.[i] ?? spec.default;
    if (requested > spec.max) {
      values[spec.name] = spec.max;
      lowered.push({
        name: spec.name,
        requested,
        applied: spec.max,
        reason: spec.maxReason ?? "the maximum",
      });
    } else {
      values[spec.name] = requested;
    }
  });
  return { values, lowered };
}

/**
 * The page fields that report lowered parameters, as a JSON fragment to put before a page's closing
 * brace (`,"max_tokens":25000,"note":"…"`), or "" when nothing was lowered.
 */
export function loweredFields(lowered: readonly Lowered[]): string {
  if (lowered.length === 0) return "";
  let out = "";
  for (const l of lowered) out += `,${JSON.stringify(l.name)}:${l.applied}`;
  const note = lowered
    .map((l) => `${l.name} ${l.requested} was lowered to ${l.reason} of ${l.applied}.`)
    .join(" ");
  return `${out},"note":${JSON.stringify(note)}`;
}

/** `object` (the JSON text of an object) with `fields` (`,"name":value…`) added before its end. */
export function withFields(object: string, fields: string | undefined): string {
  return fields ? `${object.slice(0, -1)}${fields}}` : object;
}

/** What a source's page builder gets from the pipeline. */
export interface PageRequest<A, S, C> {
  /** The call's context (caller, estimator, signal…), as the source's layer defines it. */
  readonly context: C;
  readonly args: A;
  /** The decoded cursor's state, when the call continues from one. */
  readonly state: S | undefined;
  /** Applied page parameters by name (`max_tokens`, …). */
  readonly params: Readonly<Record<string, number>>;
  /** Fields reporting lowered parameters, to append to the page (see `loweredFields`). */
  readonly loweredFields: string;
  /** A continuation cursor at `state`, carrying this page's parameters. */
  readonly cursorAt: (state: S) => string;
}

/**
 * How a tool's cursors are laid out: the page parameters they carry, then a payload. Other sources
 * may issue cursors of a format that is not their own (a `read` cursor over one long line).
 */
export interface CursorFormat<S, C> {
  /** The tool whose cursors these are (bound into each cursor's MAC). */
  readonly tool: string;
  /** The page parameters the cursors carry, in cursor order. */
  readonly params: readonly PageParam[];
  /** Reads the payload (after the parameters); must consume it exactly or throw INVALID_CURSOR. */
  readState(r: ByteReader, context: C): S;
  writeState(w: ByteWriter, state: S, context: C): void;
}

/**
 * A source of pages. Implementations live in `src/sources/<kind>/`; the pipeline (`runSource`)
 * does everything that is the same for all of them.
 */
export interface Source<A, S, C> extends CursorFormat<S, C> {
  /**
   * The first argument given with a cursor that disagrees with what the cursor fixes (its query,
   * range or mode), or undefined. Arguments left out never conflict.
   */
  conflictWith(args: A, state: S): string | undefined;
  /** Builds one page (open, version, collect, fit, render). */
  page(request: PageRequest<A, S, C>): Promise<string>;
}

/** Who is calling and how cursors are signed: what the pipeline needs besides the source. */
export interface SourceRun<C> {
  readonly codec: CursorCodec;
  readonly identity: string;
  readonly context: C;
  /**
   * The context whose estimator charges a page that carries a cursor `reserve` tokens more (see
   * `reservingWalk`): used when the call sets the budget, so that the walk it starts can go on at it.
   */
  readonly reservingWalk?: (context: C, reserve: WalkReserve) => C;
}

/** INVALID_ARGUMENT for an argument that disagrees with the cursor it was passed with. */
export function conflictingArgument(name: string): PagewiseError {
  return new PagewiseError(
    "INVALID_ARGUMENT",
    `The cursor already fixes ${name}; pass the cursor without ${name}, or with the same value.`,
    { hint: `Leave out ${name} when continuing, or start again without a cursor to change it.` },
  );
}

/** Encodes a cursor of `source` at `state` with the page parameters `values`. */
export function encodeSourceCursor<S, C>(
  source: CursorFormat<S, C>,
  run: SourceRun<C>,
  values: Readonly<Record<string, number>>,
  state: S,
): string {
  const w = new Writer();
  let mask = 0;
  const set: number[] = [];
  let budget: number | undefined;
  source.params.forEach((spec, i) => {
    const value = values[spec.name] ?? spec.default;
    if (value !== spec.default) {
      mask |= 1 << i;
      if (spec.name === MAX_TOKENS_PARAM.name) budget = value;
      else set.push(value);
    }
  });
  w.u8(mask);
  for (const value of set) w.uint(value);
  source.writeState(w, state, run.context);
  return run.codec.encode(source.tool, run.identity, w.finish(), budget);
}

/** Decodes a cursor of `source`: its page parameters and its state. Throws INVALID_CURSOR. */
export function decodeSourceCursor<S, C>(
  source: CursorFormat<S, C>,
  run: SourceRun<C>,
  cursor: string,
): { params: (number | undefined)[]; state: S } {
  const { reader: r, budget } = run.codec.decodeWithBudget(source.tool, run.identity, cursor);
  const mask = r.u8();
  if (mask >> source.params.length !== 0) throw malformedCursor();
  // The mask's budget bit says whether the codec's frame carries a budget; they must agree.
  let budgetUsed = budget === undefined;
  const params = source.params.map((spec, i) => {
    if (!(mask & (1 << i))) return undefined;
    if (spec.name !== MAX_TOKENS_PARAM.name) return r.uint();
    if (budget === undefined) throw malformedCursor();
    budgetUsed = true;
    return budget;
  });
  if (!budgetUsed) throw malformedCursor();
  const state = source.readState(r, run.context);
  r.end();
  return { params, state };
}

/**
 * Runs one call of `source`: decode the cursor, merge and lower the page parameters, check the
 * arguments against the cursor, build the page.
 */
export async function runSource<A, S, C>(
  source: Source<A, S, C>,
  run: SourceRun<C>,
  args: A,
  cursor: string | undefined,
  given: Readonly<Record<string, number | undefined>>,
): Promise<string> {
  let state: S | undefined;
  let fromCursor: (number | undefined)[] | undefined;
  if (cursor !== undefined) {
    const decoded = decodeSourceCursor(source, run, cursor);
    state = decoded.state;
    fromCursor = decoded.params;
    const conflict = source.conflictWith(args, state);
    if (conflict !== undefined) throw conflictingArgument(conflict);
  }
  const resolved = resolvePageParams(source.params, given, fromCursor);
  // A walk goes on at the budget it started with: the call that sets it (a first call, or a
  // continuation passing max_tokens) keeps a reserve for the pages after it; a continuation on
  // its cursor's budget spends it.
  const setsBudget = cursor === undefined || given[MAX_TOKENS_PARAM.name] !== undefined;
  const context =
    setsBudget && run.reservingWalk
      ? run.reservingWalk(run.context, {
          page: WALK_RESERVE_TOKENS,
          perCursor: WALK_RESERVE_TOKENS_PER_CURSOR,
        })
      : run.context;
  // The budget the cursors carry while a refusal's smallest page is counted again (see
  // `exactMinimum`); the page's own budget otherwise.
  let cursorBudget: number | undefined;
  const pageWith = (values: Readonly<Record<string, number>>) =>
    source.page({
      context,
      args,
      state,
      params: values,
      loweredFields: loweredFields(resolved.lowered),
      cursorAt: (next) =>
        encodeSourceCursor(
          source,
          run,
          cursorBudget === undefined ? values : { ...values, max_tokens: cursorBudget },
          next,
        ),
    });
  try {
    return await pageWith(resolved.values);
  } catch (err) {
    const exact = exactMinimum(err, resolved.values.max_tokens, (budget, recount) => {
      cursorBudget = budget;
      try {
        return recount();
      } finally {
        cursorBudget = undefined;
      }
    });
    const refusal = exact ?? (await workingMinimum(err, resolved.values, pageWith));
    const cap = source.params.find((spec) => spec.name === "max_tokens")?.max;
    throw cap === undefined ? refusal : beyondTheCap(refusal, cap);
  }
}

/**
 * A refusal whose smallest working budget is above the server's cap names a budget the server
 * would lower and refuse again (a page whose cursor must carry a 64 KB pattern): it is a limit
 * instead, with no retry to suggest.
 */
function beyondTheCap(refusal: unknown, cap: number): unknown {
  if (!(refusal instanceof PagewiseError) || refusal.code !== "BUDGET_TOO_SMALL") return refusal;
  const minimum = refusal.details.minimum_max_tokens;
  if (typeof minimum !== "number" || minimum <= cap) return refusal;
  return new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The smallest page of this call needs max_tokens ${minimum}, above the server's cap of ${cap}: its metadata (the cursor carries the call's arguments, such as a pattern) is too large.`,
    {
      limit: { name: "max_tokens_cap", limit: cap, value: minimum },
      hint: "Shorten the arguments the cursor carries (a shorter pattern), or start the server with a larger --max-tokens-cap.",
    },
  );
}

/**
 * Budgets below a refusal's first count that are still tried: a cursor carries its page's budget
 * under its MAC, so each budget gives other cursor characters, and their count varies by up to
 * about this much (measured: ±16 tokens over random 40-byte cursors with the default estimator).
 */
const MINIMUM_SCAN_BELOW = 32;
/** Budgets above a refusal's first count tried before giving up on an exact minimum. */
const MINIMUM_SCAN_ABOVE = 256;

/**
 * The exact smallest budget above the refused one that returns a page, when the refusal can count
 * its smallest page again (`smallestPageRecount`): that page is rendered with its cursors carrying
 * each budget in turn, which costs a small page's count per budget tried and never builds the
 * page again. Undefined when it cannot tell (no recount, or none in reach).
 */
function exactMinimum(
  err: unknown,
  refused: number | undefined,
  countAt: (budget: number, recount: () => number) => number,
): PagewiseError | undefined {
  if (!(err instanceof PagewiseError) || err.code !== "BUDGET_TOO_SMALL") return undefined;
  const recount = smallestPageRecount(err);
  const first = err.details.minimum_max_tokens;
  if (recount === undefined || refused === undefined || typeof first !== "number") return undefined;
  const from = Math.max(refused + 1, first - MINIMUM_SCAN_BELOW);
  for (let budget = from; budget <= first + MINIMUM_SCAN_ABOVE; budget++) {
    if (countAt(budget, recount) <= budget) return budgetTooSmallAt(err, budget);
  }
  return undefined;
}

/** Attempts to confirm that a BUDGET_TOO_SMALL minimum works. */
const MINIMUM_CONFIRMATIONS = 8;

/**
 * A page carries its own budget in its cursors, so the page that a budget of `m` produces can
 * cost a little more or less than the page measured under the failed budget. The minimum that a
 * BUDGET_TOO_SMALL names is therefore confirmed by building the page with it (and raised until it
 * works), so that it really is a budget that works.
 */
async function workingMinimum(
  err: unknown,
  values: Readonly<Record<string, number>>,
  pageWith: (values: Readonly<Record<string, number>>) => Promise<string>,
): Promise<unknown> {
  let failure = err;
  for (let attempt = 0; attempt < MINIMUM_CONFIRMATIONS; attempt++) {
    if (!(failure instanceof PagewiseError) || failure.code !== "BUDGET_TOO_SMALL") return failure;
    const minimum = failure.details.minimum_max_tokens;
    if (typeof minimum !== "number" || values.max_tokens === undefined) return failure;
    try {
      await pageWith({ ...values, max_tokens: minimum });
      return failure;
    } catch (next) {
      if (!(next instanceof PagewiseError) || next.code !== "BUDGET_TOO_SMALL") return failure;
      const raised = next.details.minimum_max_tokens;
      if (typeof raised !== "number" || raised <= minimum) return failure;
      failure = budgetTooSmallAt(failure, raised);
    }
  }
  return failure;
}

function budgetTooSmallAt(failure: PagewiseError, minimum: number): PagewiseError {
  return new PagewiseError("BUDGET_TOO_SMALL", failure.message.replace(/\d+\.$/, `${minimum}.`), {
    ...failure.details,
    minimum_max_tokens: minimum,
    retry: { max_tokens: minimum },
  });
}
