/**
 * @module
 * The streaming query evaluator: a {@link TokenSink} that finds the matches of a compiled query in
 * one forward pass and releases them in RFC 9535 order.
 *
 * Model. Every open container carries *threads*: partial matches "this node is the input of segment
 * `seg`", each with the partial RFC order key of its chain. Entering a child applies the segment's
 * selectors; a selected child either completes the query (a match *entry*) or gets a thread for the
 * next segment; descendant segments also pass their thread down to every child container. A node
 * reached by several chains is matched several times, as the RFC's nodelists require.
 *
 * Order. The RFC orders a nodelist by segment, then by selector, then by child order, with
 * descendant segments visiting nodes before their descendants. Each entry's key encodes exactly
 * that (per child segment `[selector, ord]`, per descendant segment `[offset of the visited node,
 * selector, ord]`, where `ord` is 0 for names and indexes, the child's offset for wildcards and
 * filters, and ±index for slices). Entries wait in a heap and are released once no future match can
 * sort before them: the *watermark* is the smallest key any open container's threads may still
 * produce. In document-ordered queries entries leave as soon as they end; otherwise they wait, up to
 * `max_buffered_matches`.
 *
 * Tentative selections. A filter over a container is decided when the container ends (only the
 * parts the filter reads are materialized, see filter-eval.ts); a negative index or a slice that
 * counts from the end is decided when the array ends (or earlier, once enough elements follow).
 * Matches inside such children wait under a pending *decision* and are dropped if it fails.
 */

import { PagewiseError } from "../core/index.js";
import {
  type EvalContext,
  evalLogical,
  filterValueTooLarge,
  OPAQUE,
  PartialArray,
  type Projection,
  projectionOf,
  sliceIndexes,
  type Value,
} from "./filter-eval.js";
import type { LogicalExpr, Segment, Selector } from "./jsonpath-ast.js";
import type { JsonLimits } from "./limits.js";
import { escapePointerToken } from "./pointer-text.js";
import type { ResumeState, ResumeStep } from "./resume.js";

// Perf: module-local bindings (see tokenizer.ts).
const { KIND_ARRAY, KIND_OBJECT, T_FALSE, T_NULL, T_NUMBER, T_STRING, T_TRUE } = tokenizer;

import type { ResumeLevel, Tokenizer, TokenSink } from "./tokenizer.js";
import * as tokenizer from "./tokenizer.js";

/** A request to scan ahead for member `name` of the object open at `level` (see QueryEvaluator). */
export interface LookaheadRequest {
  level: number;
  name: string;
  /** Where the scan starts (just after a value), and the container stack there. */
  offset: number;
  levels: ResumeLevel[];
  frame: unknown;
  frameStart: number;
  thread: unknown;
  j: number;
}

/** One match released in order: its pointer, its source byte range, and the state to resume after it. */
export interface QueryMatch {
  pointer: string;
  start: number;
  end: number;
  resume: ResumeState;
}

const PENDING = 0;
const ACCEPTED = 1;
const REJECTED = 2;

class Decision {
  state = PENDING;
  entries: Entry[] | null = null;
  children: Decision[] | null = null;
  constructor(readonly parent: Decision | null) {
    if (parent) {
      if (parent.children) parent.children.push(this);
      else parent.children = [this];
    }
  }
}

interface Entry {
  key: number[];
  seq: number;
  pointer: string;
  start: number;
  end: number;
  decision: Decision | null;
  dead: boolean;
  /** A clean point that follows this entry: resuming there continues right after it. */
  preclean: ResumeState | null;
}

interface Thread {
  seg: number;
  key: number[];
  decision: Decision | null;
  /** Bit j: selector j (a name or index) already selected its only possible child here. */
  done: number;
  /** Per selector: the pending decisions of a negative index / end-relative slice. */
  trackers: (Tracker | undefined)[] | null;
}

/** Pending per-element decisions of one selector of one thread on one array. */
interface Tracker {
  sel: Selector & { kind: "index" | "slice" };
  pending: { index: number; decision: Decision }[];
}

class Frame {
  kind = 0;
  start = 0;
  threads: Thread[] = [];
  level = 0;
  /** Built on demand from the parent's pointer and ptrName / ptrIndex. */
  pointer: string | null = "";
  ptrName: string | null = null;
  ptrIndex = -1;
  childCount = 0;
  openEntries: Entry[] | null = null;
  wantsScalars = false;
  hasTrackers = false;
  tentative = 0; // threads with a decision
}

/** A filter candidate being materialized (only what its filter reads). */
interface BuildLevel {
  proj: Projection | null; // null: skipped subtree
  full: boolean;
  container: Map<string, Value> | Value[] | PartialArray | null;
  key: string;
  count: number;
}

class Capture {
  levels: BuildLevel[] = [];
  value: Value = null;
  fullStart = -1; // offset where the outermost fully materialized value began
  constructor(
    readonly rootLevel: number,
    readonly expr: LogicalExpr,
    readonly proj: Projection,
    readonly decision: Decision,
    readonly start: number,
  ) {}
}

interface CompiledSelectorInfo {
  projections: Map<LogicalExpr, Projection>;
}

/** Classification of slices: decidable from the index alone, or only knowing the array's length. */
function sliceNeedsLength(sel: {
  start: number | null;
  end: number | null;
  step: number | null;
}): boolean {
  const step = sel.step ?? 1;
  if (step <= 0) return step < 0;
  return (sel.start !== null && sel.start < 0) || (sel.end !== null && sel.end < 0);
}

export class QueryEvaluator implements TokenSink {
  readonly out: QueryMatch[] = [];
  finished = false;

  readonly #segs: Segment[];
  readonly #n: number;
  readonly #limits: JsonLimits;
  readonly #ctx: EvalContext;
  readonly #info: CompiledSelectorInfo;
  #tok!: Tokenizer;
  readonly #frames: Frame[] = [];
  readonly #seqRoot: boolean;
  #rootDone = false;
  #replaying = false;

  // Ordered release.
  #heap: Entry[] = [];
  #lastNow = 0;
  readonly #lookaheadAfter: number;
  #live = 0;
  #dead = 0;
  #seq = 0;
  #threadCount = 0;
  #tentativeThreads = 0;
  #captures: Capture[] = [];
  #cp: ResumeState = { offset: 0, path: [], skip: 0 };
  #emittedSinceCp = 0;

  constructor(segments: Segment[], seqRoot: boolean, limits: JsonLimits, ctx: EvalContext) {
    this.#segs = segments;
    this.#n = segments.length;
    this.#seqRoot = seqRoot;
    this.#limits = limits;
    this.#ctx = ctx;
    this.#info = { projections: new Map() };
    this.#lookaheadAfter = Math.max(1, Math.min(256, limits.maxBufferedMatches >> 1));
    for (const seg of segments) this.#collectFilters(seg.selectors);
  }

  #collectFilters(selectors: Selector[]): void {
    for (const sel of selectors) {
      if (sel.kind === "filter") this.#info.projections.set(sel.expr, projectionOf(sel.expr));
    }
  }

  attach(tok: Tokenizer): void {
    this.#tok = tok;
  }

  #frame(level: number): Frame {
    let f = this.#frames[level];
    if (!f) {
      f = new Frame();
      f.level = level;
      this.#frames[level] = f;
    }
    return f;
  }

  #pointerOf(f: Frame): string {
    if (f.pointer === null) {
      f.pointer = childPointer(this.#pointerOf(this.#frames[f.level - 1]), f.ptrName, f.ptrIndex);
    }
    return f.pointer;
  }

  #initialThreads(): Thread[] {
    return [{ seg: 0, key: [], decision: null, done: 0, trackers: null }];
  }

  // --- resume ---------------------------------------------------------------------------------

  /** Rebuilds the state at a clean point (see resume.ts); names in `path` must be resolved. */
  resumeFrom(state: ResumeState): void {
    this.#cp = { ...state, skip: 0 };
    this.#replaying = true;
    const path = state.path;
    if (!this.#seqRoot && path.length === 0) {
      this.#rootDone = true;
      this.#replaying = false;
      return;
    }
    // Level 0: the document's root container (json) or the record sequence.
    const root = this.#frame(0);
    this.#openFrame(
      root,
      this.#seqRoot ? KIND_ARRAY : stepKind(path[0]),
      0,
      this.#n > 0 ? this.#initialThreads() : [],
      null,
      -1,
    );
    for (let i = 0; i < path.length; i++) {
      const parent = this.#frames[i];
      const step = path[i];
      const name = typeof step === "number" ? null : step.key!;
      const index = typeof step === "number" ? step : -1;
      parent.childCount = (typeof step === "number" ? step : 0) + 1;
      const last = i === path.length - 1;
      const childKind = last ? 0 : stepKind(path[i + 1]);
      const threads = this.#select(parent, name, index, i + 1, -1, childKind !== 0);
      if (!last) {
        const f = this.#frame(i + 1);
        this.#openFrame(f, childKind, i + 1, threads, name, index);
      }
    }
    this.#replaying = false;
    for (const [level, k, mask] of state.done ?? []) {
      const t = level < path.length ? this.#frames[level].threads[k] : undefined;
      if (!t) throw internal("a resume state names a partial match that does not exist");
      t.done |= mask;
    }
    const top = this.#frames[path.length - 1];
    this.#tok.wantScalarBytes = top ? top.wantsScalars : false;
  }

  /** True once the document's root value (json) has ended. */
  get rootDone(): boolean {
    return this.#rootDone;
  }

  // --- token events -----------------------------------------------------------------------------

  open(kind: number, start: number): void {
    const level = this.#tok.depth - 1;
    const f = this.#frame(level);
    if (level === 0) {
      const threads = this.#n > 0 ? this.#initialThreads() : [];
      // The record sequence starts "before" its first record so that offsets stay a preorder.
      const at = this.#seqRoot ? -1 : start;
      this.#openFrame(f, kind === KIND_OBJECT ? KIND_OBJECT : KIND_ARRAY, at, threads, null, -1);
      if (this.#n === 0 && !this.#seqRoot) {
        const e = this.#newEntry([], "", start, -1, null);
        f.openEntries = [e];
        this.#insert(e);
      }
    } else {
      const parent = this.#frames[level - 1];
      if (parent.threads.length > 0 || this.#captures.length > 0) {
        this.#childId(level - 1);
        const name = this.#cName;
        const index = this.#cIndex;
        parent.childCount++;
        let threads: Thread[] = NO_THREADS;
        if (parent.threads.length > 0) {
          this.#pendingOpenEntries = null;
          threads = this.#select(parent, name, index, start, -1, true);
        }
        this.#openFrame(f, kind, start, threads, name, index);
        f.openEntries = this.#pendingOpenEntries;
        this.#pendingOpenEntries = null;
        if (this.#captures.length > 0) this.#captureOpen(kind, start, name, index, level);
        if (this.#pendingCaptures) {
          for (const c of this.#pendingCaptures) this.#startCapture(c, kind, start);
          this.#pendingCaptures = null;
        }
      } else {
        parent.childCount++;
        this.#openFrame(f, kind, start, NO_THREADS, null, -1);
      }
    }
    this.#tok.wantScalarBytes = f.wantsScalars || this.#captures.length > 0;
    this.#quietIfExhausted(f, level, start);
  }

  key(_name: string, _start: number): void {}

  scalar(type: number, start: number, end: number): void {
    this.#lastNow = end;
    const tok = this.#tok;
    const level = tok.depth - 1;
    if (level < 0) {
      // The root is a scalar (json).
      if (this.#n === 0) this.#insert(this.#newEntry([], "", start, end, null));
      this.#rootDone = true;
      this.#release(end);
      return;
    }
    const parent = this.#frames[level];
    parent.childCount++;
    if (parent.threads.length === 0 && this.#captures.length === 0) return;
    this.#childId(level);
    const name = this.#cName;
    const index = this.#cIndex;
    // Perf: the value is decoded only if a filter or a materialized capture reads it.
    this.#curType = type;
    this.#curValueReady = false;
    let selected = false;
    if (parent.threads.length > 0) {
      this.#pendingOpenEntries = null;
      this.#selectedSomething = false;
      this.#select(parent, name, index, start, end, false);
      selected = this.#selectedSomething;
      this.#pendingOpenEntries = null;
    }
    if (this.#captures.length > 0) this.#captureScalar(name, index, level, start, end);
    // Perf: only a selection (a new entry, a name or index used up) can move the watermark here.
    if (selected && this.#heap.length > 0) this.#release(end);
    if (this.#live > 0) this.#precleanCheck(end);
    if (selected) this.#quietIfExhausted(parent, level, end);
  }

  close(end: number): void {
    this.#lastNow = end;
    const level = this.#tok.depth;
    const f = this.#frames[level];
    if (f.openEntries) {
      for (const e of f.openEntries) e.end = end;
      f.openEntries = null;
    }
    if (f.hasTrackers) this.#resolveTrackers(f);
    if (this.#captures.length > 0) this.#captureClose(level, end);
    const hadThreads = f.threads.length > 0;
    this.#closeFrame(f);
    if (level === 0) this.#rootDone = true;
    if (level > 0)
      this.#tok.wantScalarBytes = this.#frames[level - 1].wantsScalars || this.#captures.length > 0;
    if (this.#heap.length > 0) this.#release(end);
    else if (hadThreads || level === 0 || this.#frames[level - 1].threads.length > 0)
      this.#checkFinished(end);
    if (this.#live > 0) this.#precleanCheck(end);
    if (end - this.#cp.offset > CHECKPOINT_BYTES) this.#checkpoint(end);
    // A child selected when it opened (`$[*].items`) may have used up the last name of its parent.
    if (level > 0 && this.#frames[level - 1].threads.length > 0)
      this.#quietIfExhausted(this.#frames[level - 1], level - 1, end);
  }

  /**
   * Makes the tokenizer quiet inside frame `f` (at `level`) once nothing in it can be selected.
   * The events that would have told the driver the query is finished (no container anywhere can
   * select more) are among those skipped, so that is checked here.
   */
  #quietIfExhausted(f: Frame, level: number, now: number): void {
    if (!this.#exhausted(f)) return;
    this.#tok.quietInside(level);
    this.#checkFinished(now);
  }

  /**
   * Whether nothing inside open frame `f` can be selected any more, nor matter to a match: no
   * filter candidate is being built, no match waits, and each of its partial matches is settled
   * and can only select names it has already selected (or none: an array has no names). Its
   * members' events are then not needed (see Tokenizer.quietInside).
   */
  #exhausted(f: Frame): boolean {
    if (this.#captures.length > 0 || this.#live > 0) return false;
    const threads = f.threads;
    for (let k = 0; k < threads.length; k++) {
      const t = threads[k];
      if (t.decision !== null) return false;
      const seg = this.#segs[t.seg];
      if (seg.descendant) return false;
      const selectors = seg.selectors;
      for (let j = 0; j < selectors.length; j++) {
        if (selectors[j].kind !== "name") return false;
        if (f.kind === KIND_OBJECT && !(t.done & bit(j))) return false;
      }
    }
    return true;
  }

  // --- frames and selection ---------------------------------------------------------------------

  /** Opens frame `f`; `name`/`index` identify it in its parent (its pointer is built only if asked). */
  #openFrame(
    f: Frame,
    kind: number,
    start: number,
    threads: Thread[],
    name: string | null,
    index: number,
  ): void {
    f.kind = kind;
    f.start = start;
    f.threads = threads;
    f.pointer = this.#frames[0] === f ? "" : null;
    f.ptrName = name;
    f.ptrIndex = index;
    f.childCount = 0;
    f.openEntries = null;
    f.hasTrackers = false;
    let wants = false;
    let tentative = 0;
    for (const t of threads) {
      if (t.decision) tentative++;
      if (!wants)
        for (const sel of this.#segs[t.seg].selectors) if (sel.kind === "filter") wants = true;
    }
    f.wantsScalars = wants;
    f.tentative = tentative;
    this.#tentativeThreads += tentative;
    this.#threadCount += threads.length;
    if (this.#threadCount > this.#limits.maxQueryThreads) {
      throw new PagewiseError(
        "RESOURCE_LIMIT_EXCEEDED",
        `The query keeps too many partial matches alive: max_query_threads is ${this.#limits.maxQueryThreads}`,
        {
          limit: {
            name: "max_query_threads",
            limit: this.#limits.maxQueryThreads,
            value: this.#threadCount,
          },
          hint: "Several descendant segments (..) multiply partial matches; use fewer, or more specific names.",
          location: this.#tok ? this.#tok.location(start) : undefined,
        },
      );
    }
  }

  #closeFrame(f: Frame): void {
    this.#threadCount -= f.threads.length;
    this.#tentativeThreads -= f.tentative;
    f.threads = NO_THREADS;
    f.tentative = 0;
  }

  #cName: string | null = null;
  #cIndex = -1;

  /** The current child of the container at `parentLevel`: its member name, or its index. */
  #childId(parentLevel: number): void {
    const tok = this.#tok;
    if (tok.kinds[parentLevel] === KIND_OBJECT) {
      this.#cName = tok.keys[parentLevel];
      this.#cIndex = -1;
    } else {
      this.#cName = null;
      this.#cIndex = tok.index[parentLevel];
    }
  }

  #pendingOpenEntries: Entry[] | null = null;
  #selectedSomething = false;
  #pendingCaptures: Capture[] | null = null;

  /**
   * Applies the threads of `parent` to its child (`name` in an object, `index` in an array) starting
   * at `start`. Returns the child's threads; match entries go to #pendingOpenEntries (their end is
   * set by the caller), filter candidates that are containers to #pendingCaptures.
   */
  #select(
    parent: Frame,
    name: string | null,
    index: number,
    start: number,
    end: number,
    isContainer: boolean,
  ): Thread[] {
    let childThreads: Thread[] = NO_THREADS; // Perf: allocated only when a thread is added
    const segs = this.#segs;
    for (const t of parent.threads) {
      if (t.decision && effective(t.decision) === REJECTED) continue;
      const seg = segs[t.seg];
      const selectors = seg.selectors;
      for (let j = 0; j < selectors.length; j++) {
        const sel = selectors[j];
        let decision = this.#admit(parent, t, j, sel, name, index, start, isContainer);
        if (decision === false) continue;
        this.#selectedSomething = true;
        if (decision === null) decision = t.decision;
        else if (decision.parent !== t.decision) throw internal("decision parent mismatch");
        const ord = selectorOrder(sel, index, start);
        const key = seg.descendant
          ? extendKey(t.key, 3, parent.start, j, ord)
          : extendKey(t.key, 2, j, ord, 0);
        if (t.seg + 1 === this.#n) {
          if (this.#replaying) continue;
          this.#selectEntry(parent, key, name, index, start, end, decision, isContainer);
        } else if (isContainer) {
          const thread: Thread = { seg: t.seg + 1, key, decision, done: 0, trackers: null };
          childThreads = withThread(childThreads, thread);
        }
      }
      if (seg.descendant && isContainer) {
        const thread: Thread = {
          seg: t.seg,
          key: t.key,
          decision: t.decision,
          done: 0,
          trackers: null,
        };
        childThreads = withThread(childThreads, thread);
      }
    }
    return childThreads;
  }

  /**
   * Whether selector `j` of thread `t` selects the child: false when it does not, else the
   * decision the selection waits on (null: the thread's own). Marks one-shot selectors done.
   */
  #admit(
    parent: Frame,
    t: Thread,
    j: number,
    sel: Selector,
    name: string | null,
    index: number,
    start: number,
    isContainer: boolean,
  ): Decision | null | false {
    const isObject = parent.kind === KIND_OBJECT;
    switch (sel.kind) {
      case "name":
        if (!isObject || name !== sel.name || t.done & bit(j)) return false;
        t.done |= bit(j);
        return null;
      case "ptr":
        if (isObject ? name !== sel.name : index !== sel.index) return false;
        t.done |= bit(j);
        return null;
      case "wildcard":
        return null;
      case "index":
        if (isObject) return false;
        if (sel.index >= 0) {
          if (index !== sel.index) return false;
          t.done |= bit(j);
          return null;
        }
        if (this.#replaying) return false;
        return this.#track(parent, t, j, sel, index) ?? false;
      case "slice": {
        if (isObject) return false;
        const step = sel.step ?? 1;
        if (step === 0) return false;
        if (!sliceNeedsLength(sel)) {
          const lo = sel.start ?? 0;
          if (index < lo || (sel.end !== null && index >= sel.end) || (index - lo) % step !== 0)
            return false;
          return null;
        }
        if (this.#replaying) return false;
        return this.#track(parent, t, j, sel, index) ?? false;
      }
      case "filter":
        return this.#admitFilter(t, sel, start, isContainer);
    }
  }

  /**
   * A filter selector: a scalar (or a container the filter cannot look into) is tested now; any
   * other container becomes a capture whose decision waits for its end.
   */
  #admitFilter(
    t: Thread,
    sel: Selector & { kind: "filter" },
    start: number,
    isContainer: boolean,
  ): Decision | null | false {
    if (this.#replaying) {
      if (isContainer) throw internal("a resume path crosses a filter candidate");
      return false;
    }
    const proj = this.#info.projections.get(sel.expr)!;
    const independent = !proj.full && !proj.names && !proj.indexes;
    if (!isContainer || independent) {
      const v: Value = isContainer ? OPAQUE : this.#currentValue();
      return evalLogical(sel.expr, v, this.#ctx) ? null : false;
    }
    const decision = new Decision(t.decision);
    const cap = new Capture(this.#tok.depth - 1, sel.expr, proj, decision, start);
    if (this.#pendingCaptures) this.#pendingCaptures.push(cap);
    else this.#pendingCaptures = [cap];
    return decision;
  }

  /** Records a match of the last segment (a container's entry waits for its end). */
  #selectEntry(
    parent: Frame,
    key: number[],
    name: string | null,
    index: number,
    start: number,
    end: number,
    decision: Decision | null,
    isContainer: boolean,
  ): void {
    const e = this.#newEntry(
      key,
      childPointer(this.#pointerOf(parent), name, index),
      start,
      end,
      decision,
    );
    // Only a container's entries wait for their end (a scalar's is known).
    if (isContainer) {
      if (this.#pendingOpenEntries) this.#pendingOpenEntries.push(e);
      else this.#pendingOpenEntries = [e];
    }
    this.#insert(e);
  }

  /** A tentative selection of element `index` by a negative index or an end-relative slice. */
  #track(
    parent: Frame,
    t: Thread,
    j: number,
    sel: Selector & { kind: "index" | "slice" },
    index: number,
  ): Decision | null {
    // Early rejections that need no length.
    if (sel.kind === "slice") {
      const step = sel.step ?? 1;
      if (step > 0 && sel.end !== null && sel.end >= 0 && index >= sel.end) return null;
      if (step < 0) {
        if (sel.start !== null && sel.start >= 0 && index > sel.start) return null;
        if (sel.end !== null && sel.end >= 0 && index <= sel.end) return null;
      }
    }
    t.trackers ??= [];
    let tr = t.trackers[j];
    if (!tr) {
      tr = { sel, pending: [] };
      t.trackers[j] = tr;
    }
    parent.hasTrackers = true;
    const d = new Decision(t.decision);
    tr.pending.push({ index, decision: d });
    this.#earlyDecide(tr, index + 1);
    if (tr.pending.length > this.#limits.maxBufferedMatches)
      this.#tooManyBuffered(tr.pending.length);
    return d;
  }

  /** Decides what is already known once `seen` elements exist. */
  #earlyDecide(tr: Tracker, seen: number): void {
    const sel = tr.sel;
    if (sel.kind === "index") {
      const k = -sel.index;
      // Element i is at position -k only if the length is i + k; once element i + k exists it is not.
      while (tr.pending.length > 0 && tr.pending[0].index + k < seen) {
        this.#decide(tr.pending.shift()!.decision, false);
      }
      return;
    }
    const step = sel.step ?? 1;
    if (step > 0) {
      if (sel.start !== null && sel.start < 0) {
        // lower = max(len + start, 0) >= seen + start: earlier elements can no longer be selected.
        const minLower = seen + sel.start;
        while (tr.pending.length > 0 && tr.pending[0].index < minLower)
          this.#decide(tr.pending.shift()!.decision, false);
      }
      if ((sel.start === null || sel.start >= 0) && sel.end !== null && sel.end < 0) {
        // Selected iff index >= start, aligned, and index < len + end; the last holds once index - end < seen.
        const lo = sel.start ?? 0;
        while (tr.pending.length > 0 && tr.pending[0].index - sel.end < seen) {
          const p = tr.pending.shift()!;
          this.#decide(p.decision, p.index >= lo && (p.index - lo) % step === 0);
        }
      }
    }
  }

  #resolveTrackers(f: Frame): void {
    const len = f.childCount;
    for (const t of f.threads) {
      if (!t.trackers) continue;
      for (const tr of t.trackers) {
        if (!tr) continue;
        let selected: Set<number>;
        if (tr.sel.kind === "index") {
          selected = new Set([len + tr.sel.index]);
        } else selected = new Set(sliceIndexes(tr.sel, len));
        for (const p of tr.pending) this.#decide(p.decision, selected.has(p.index));
        tr.pending = [];
      }
    }
  }

  #decide(d: Decision, accept: boolean): void {
    if (d.state !== PENDING) return;
    if (accept) {
      d.state = ACCEPTED;
      return;
    }
    d.state = REJECTED;
    this.#purge(d);
  }

  #purge(d: Decision): void {
    if (d.entries) {
      for (const e of d.entries) {
        if (!e.dead) {
          e.dead = true;
          this.#live--;
          this.#dead++;
        }
      }
      d.entries = null;
    }
    if (d.children) {
      for (const c of d.children) this.#purge(c);
      d.children = null;
    }
  }

  // --- captures (filter candidates) -------------------------------------------------------------

  #startCapture(c: Capture, kind: number, start: number): void {
    const proj = c.proj;
    const level: BuildLevel = { proj, full: proj.full, container: null, key: "", count: 0 };
    level.container = newContainer(kind, proj.full);
    if (proj.full) c.fullStart = start;
    c.value = level.container as Value;
    c.levels.push(level);
    this.#captures.push(c);
    this.#tok.wantScalarBytes = true;
  }

  #captureOpen(
    kind: number,
    start: number,
    name: string | null,
    index: number,
    level: number,
  ): void {
    for (const c of this.#captures) {
      if (level <= c.rootLevel) continue;
      const parent = c.levels[c.levels.length - 1];
      const child = childProjection(parent, name, index);
      if (!child) {
        c.levels.push({ proj: null, full: false, container: null, key: "", count: 0 });
        continue;
      }
      const full = parent.full || child.full;
      const container = newContainer(kind, full);
      if (full && !parent.full) c.fullStart = start;
      attach(parent, name, index, container as Value);
      c.levels.push({
        proj: parent.full ? parent.proj : child,
        full,
        container,
        key: "",
        count: 0,
      });
    }
  }

  #captureScalar(
    name: string | null,
    index: number,
    level: number,
    start: number,
    end: number,
  ): void {
    for (const c of this.#captures) {
      if (level < c.rootLevel) continue;
      const parent = c.levels[c.levels.length - 1];
      const child = childProjection(parent, name, index);
      if (!child) continue;
      const full = parent.full || child.full;
      attach(parent, name, index, full ? this.#currentValue() : OPAQUE);
      const from = c.fullStart >= 0 ? c.fullStart : start;
      if (full && end - from > this.#limits.maxFilterValueBytes) {
        filterValueTooLarge(
          this.#limits.maxFilterValueBytes,
          end - from,
          this.#tok.location(c.start),
        );
      }
    }
  }

  #captureClose(level: number, end: number): void {
    const caps = this.#captures;
    for (let k = caps.length - 1; k >= 0; k--) {
      const c = caps[k];
      if (level < c.rootLevel) continue;
      const lv = c.levels.pop()!;
      if (lv.container instanceof PartialArray) lv.container.length = lv.count;
      if (lv.full && c.fullStart >= 0 && end - c.fullStart > this.#limits.maxFilterValueBytes) {
        filterValueTooLarge(
          this.#limits.maxFilterValueBytes,
          end - c.fullStart,
          this.#tok.location(c.start),
        );
      }
      if (lv.full && (c.levels.length === 0 || !c.levels[c.levels.length - 1].full))
        c.fullStart = -1;
      if (level === c.rootLevel) {
        caps.splice(k, 1);
        const ok = evalLogical(c.expr, c.value, this.#ctx);
        this.#decide(c.decision, ok);
      }
    }
  }

  #curType = 0;
  #curValueReady = false;
  #curValue: Value = null;

  #currentValue(): Value {
    if (!this.#curValueReady) {
      this.#curValue = this.#scalarValue(this.#curType);
      this.#curValueReady = true;
    }
    return this.#curValue;
  }

  #scalarValue(type: number): Value {
    switch (type) {
      case T_STRING:
        return this.#tok.scalarString();
      case T_NUMBER:
        return Number(this.#tok.scalarText());
      case T_TRUE:
        return true;
      case T_FALSE:
        return false;
      case T_NULL:
        return null;
    }
    return null;
  }

  // --- ordered release --------------------------------------------------------------------------

  #newEntry(
    key: number[],
    pointer: string,
    start: number,
    end: number,
    decision: Decision | null,
  ): Entry {
    const e: Entry = {
      key,
      seq: this.#seq++,
      pointer,
      start,
      end,
      decision,
      dead: false,
      preclean: null,
    };
    if (decision) {
      if (decision.entries) decision.entries.push(e);
      else decision.entries = [e];
    }
    return e;
  }

  #insert(e: Entry): void {
    if (this.#maxEntry && !this.#maxEntry.dead && entryLess(this.#maxEntry, e)) this.#maxEntry = e;
    else if (this.#live === 0) this.#maxEntry = e;
    else if (this.#maxEntry?.dead) this.#maxEntry = null;
    this.#live++;
    if (this.#live > this.#limits.maxBufferedMatches) this.#tooManyBuffered(this.#live);
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (entryLess(h[i], h[p])) {
        const t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
      } else break;
    }
  }

  #pop(): Entry {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && entryLess(h[l], h[m])) m = l;
        if (r < h.length && entryLess(h[r], h[m])) m = r;
        if (m === i) break;
        const t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
      }
    }
    return top;
  }

  #tooManyBuffered(value: number): never {
    throw new PagewiseError(
      "RESOURCE_LIMIT_EXCEEDED",
      `Putting this query's results in RFC 9535 order needs more than max_buffered_matches (${this.#limits.maxBufferedMatches}) held back`,
      {
        limit: { name: "max_buffered_matches", limit: this.#limits.maxBufferedMatches, value },
        hint: "Descendant segments (..), unions out of document order, negative indexes and reversed slices hold matches back until their order is known. Narrow the query (e.g. $.items[*].name rather than $..name).",
      },
    );
  }

  /** Releases every entry that no future match can precede. `now`: offset just after the last event. */
  #release(now: number): void {
    const batch = this.#batch; // Perf: reused; emptied below
    const h = this.#heap;
    while (h.length > 0) {
      const e = h[0];
      if (e.dead) {
        this.#pop();
        this.#dead--;
        continue;
      }
      const st = e.decision ? effective(e.decision) : ACCEPTED;
      if (st === REJECTED) {
        this.#pop();
        if (e.decision) this.#purge(e.decision);
        if (!e.dead) {
          e.dead = true;
          this.#live--;
        } else this.#dead--;
        continue;
      }
      if (st === PENDING || e.end < 0) break;
      if (this.#blocked(e.key, now)) {
        if (this.#live >= this.#lookaheadAfter && !this.lookahead && this.#inEvent) {
          this.#requestLookahead(now);
        }
        break;
      }
      this.#pop();
      e.dead = true;
      this.#live--;
      batch.push(e);
    }
    if (batch.length > 0) {
      this.#emit(batch, now);
      batch.length = 0;
    }
    if (h.length === 0 && this.#captures.length === 0 && !this.#blocked(null, now))
      this.finished = true;
    if (this.#dead > 1024 && this.#dead > this.#live) this.#compact();
  }

  /**
   * Matches wait for a member that an ancestor object may still have (`$..name`: the root's own
   * `name` comes first in RFC order even if it is the last member). Rather than buffering until that
   * object ends, the driver scans ahead to the end of that object for the member
   * ({@link resolveLookahead}); the scan reads bytes twice but keeps memory bounded.
   */
  #requestLookahead(now: number): void {
    const t = this.#blockThread;
    const level = this.#blockLevel;
    if (!t || level < 0 || this.#bj < 0) return;
    // Re-derive the blocking selector of that thread (the last #threadBound call was for it).
    const f = this.#frames[level];
    if (!this.#threadBound(f, t, now) || this.#bj < 0) return;
    const sel = this.#segs[t.seg].selectors[this.#bj];
    if (sel.kind !== "name" || f.kind !== KIND_OBJECT || t.seg + 1 !== this.#n) return;
    const tok = this.#tok;
    const levels: ResumeLevel[] = [];
    for (let d = 0; d < tok.depth; d++) {
      levels.push({
        kind: tok.kinds[d],
        index: tok.index[d],
        key: tok.keys[d],
        keyAt: tok.keyAt[d],
      });
    }
    this.lookahead = {
      level,
      name: sel.name,
      offset: now,
      levels,
      frame: f,
      frameStart: f.start,
      thread: t,
      j: this.#bj,
    };
  }

  /** A pending request to find member `name` of the object at `level`, scanning from `offset`. */
  lookahead: LookaheadRequest | null = null;

  /** The result of {@link lookahead}: the member's byte range, or null when the object has no such member. */
  resolveLookahead(found: { start: number; end: number } | null): void {
    const req = this.lookahead;
    this.lookahead = null;
    if (!req) return;
    const f = req.frame as Frame;
    const t = req.thread as Thread;
    const stillOpen =
      this.#tok.depth > req.level && this.#frames[req.level] === f && f.start === req.frameStart;
    if (!stillOpen || !f.threads.includes(t) || t.done & bit(req.j)) return;
    t.done |= bit(req.j);
    if (found) {
      const seg = this.#segs[t.seg];
      const key = seg.descendant
        ? extendKey(t.key, 3, f.start, req.j, 0)
        : extendKey(t.key, 2, req.j, 0, 0);
      const e = this.#newEntry(
        key,
        childPointer(this.#pointerOf(f), req.name, -1),
        found.start,
        found.end,
        t.decision,
      );
      this.#insert(e);
    }
    // Not inside a token event: the tokenizer has moved on, so no new request is made from here.
    this.#inEvent = false;
    this.#release(this.#lastNow);
    this.#inEvent = true;
  }

  /** Requests need the tokenizer's state to match `now` (true during token events). */
  #inEvent = true;

  #compact(): void {
    const keep = this.#heap.filter((e) => !e.dead);
    this.#heap = [];
    this.#dead = 0;
    this.#live = 0;
    for (const e of keep) this.#insert(e);
  }

  #checkFinished(now: number): void {
    if (this.#heap.length === 0 && this.#captures.length === 0 && !this.#blocked(null, now))
      this.finished = true;
  }

  #emit(batch: Entry[], now: number): void {
    // Outside a token event the tokenizer is elsewhere: no clean point can be taken here.
    const clean = this.#inEvent && this.#isClean();
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i];
      let resume: ResumeState;
      if (e.preclean) {
        resume = e.preclean;
        this.#cp = resume;
        this.#emittedSinceCp = 0;
      } else if (clean && i === batch.length - 1) {
        resume = this.#here(now);
        this.#cp = resume;
        this.#emittedSinceCp = 0;
      } else {
        this.#emittedSinceCp++;
        resume = { ...this.#cp, skip: this.#cp.skip + this.#emittedSinceCp };
      }
      this.out.push({ pointer: e.pointer, start: e.start, end: e.end, resume });
    }
  }

  /**
   * A clean point *for the last buffered match*: when every match made so far sorts at or before the
   * greatest live one, no future match can sort before it, and nothing else is pending, then
   * re-entering here continues right after that match (e.g. the tail window of `$[-100:]`, whose
   * matches are released together when the array ends, still resumes in O(page)).
   */
  #precleanCheck(now: number): void {
    if (!this.#inEvent || this.#captures.length > 0 || this.#tentativeThreads > 0) return;
    let max = this.#maxEntry;
    if (!max || max.dead) {
      max = null;
      for (const e of this.#heap) if (!e.dead && (!max || entryLess(max, e))) max = e;
      this.#maxEntry = max;
      if (!max) return;
    }
    if (max.preclean || max.end < 0) return;
    if (this.#blocked(max.key, now)) return;
    max.preclean = this.#here(now);
  }

  #maxEntry: Entry | null = null;
  #batch: Entry[] = [];

  #checkpoint(now: number): void {
    if (this.#isClean()) {
      this.#cp = this.#here(now);
      this.#emittedSinceCp = 0;
    }
  }

  #isClean(): boolean {
    return this.#live === 0 && this.#captures.length === 0 && this.#tentativeThreads === 0;
  }

  /** The resume state of a clean point at `now` (just after a value), skipping nothing. */
  #here(now: number): ResumeState {
    const state: ResumeState = { offset: now, path: this.#path(), skip: 0 };
    let done: [number, number, number][] | undefined;
    const depth = this.#tok.depth;
    const tok = this.#tok;
    for (let L = 0; L < depth; L++) {
      const f = this.#frames[L];
      // Only names used up by members other than the current one need storing: replaying the path
      // marks the current member's, and indexes are known from the path.
      if (f.kind !== KIND_OBJECT) continue;
      const current = tok.keys[L];
      const threads = f.threads;
      for (let k = 0; k < threads.length; k++) {
        const t = threads[k];
        if (t.done === 0) continue;
        const selectors = this.#segs[t.seg].selectors;
        let mask = 0;
        for (let j = 0; j < selectors.length && j < 30; j++) {
          const sel = selectors[j];
          if (
            (sel.kind === "name" || sel.kind === "ptr") &&
            t.done & bit(j) &&
            sel.name !== current
          )
            mask |= bit(j);
        }
        if (mask === 0) continue;
        if (!done) done = [];
        done.push([L, k, mask]);
      }
    }
    if (done) state.done = done;
    return state;
  }

  /** The container path at the current position (just after a value). */
  #path(): ResumeStep[] {
    const tok = this.#tok;
    // Perf: allocated at its final size (one per emitted match on document-ordered queries).
    const path = new Array<ResumeStep>(tok.depth);
    for (let d = 0; d < tok.depth; d++) {
      path[d] =
        tok.kinds[d] === KIND_OBJECT ? { keyAt: tok.keyAt[d], key: tok.keys[d] } : tok.index[d];
    }
    return path;
  }

  /**
   * True when some open container may still produce a match whose key sorts before `key` (or, with
   * `key` null, any match at all). Perf: bounds are compared in place, without building arrays.
   */
  #blocked(key: number[] | null, now: number): boolean {
    if (!this.#seqRoot && !this.#rootDone && this.#tok.depth === 0) return true;
    const depth = this.#tok.depth;
    for (let L = 0; L < depth; L++) {
      const f = this.#frames[L];
      const threads = f.threads;
      for (let k = 0; k < threads.length; k++) {
        const t = threads[k];
        if (!this.#threadBound(f, t, now)) continue;
        if (key === null || compareKeyToBound(key, t.key, this.#bx, this.#bn) >= 0) {
          this.#blockLevel = L;
          this.#blockThread = t;
          return true;
        }
      }
    }
    return false;
  }

  // The extra components of the last bound computed by #threadBound (after the thread's key), and
  // the selector that gave it (-1: a descendant segment's future descendants).
  #bx: number[] = [0, 0, 0, 0];
  #bn = 0;
  #bj = -1;
  #blockLevel = -1;
  #blockThread: Thread | null = null;

  /**
   * Whether thread `t` of open container `f` may still select a future child; if so its smallest
   * possible key is `t.key` followed by #bx[0..#bn), as a prefix-minimum.
   */
  #threadBound(f: Frame, t: Thread, now: number): boolean {
    if (t.decision && effective(t.decision) === REJECTED) return false;
    const seg = this.#segs[t.seg];
    const isObject = f.kind === KIND_OBJECT;
    const selectors = seg.selectors;
    const bx = this.#bx;
    let n = 0;
    if (seg.descendant) bx[n++] = f.start;
    for (let j = 0; j < selectors.length; j++) {
      const sel = selectors[j];
      let tail = -1; // -1: cannot select; 0: nothing after j; 1: one more component in tailValue
      let tailValue = 0;
      switch (sel.kind) {
        case "name":
          if (isObject && !(t.done & bit(j))) tail = 0;
          break;
        case "ptr":
          if (!(t.done & bit(j)) && (isObject || (sel.index >= f.childCount && sel.index >= 0)))
            tail = 0;
          break;
        case "wildcard":
        case "filter":
          tail = 1;
          tailValue = now;
          break;
        case "index":
          if (!isObject) {
            if (sel.index < 0) tail = 0;
            else if (!(t.done & bit(j)) && sel.index >= f.childCount) tail = 0;
          }
          break;
        case "slice": {
          if (isObject) break;
          const step = sel.step ?? 1;
          if (step === 0) break;
          if (step < 0) tail = 0;
          else if (sliceNeedsLength(sel) || sel.end === null || f.childCount < sel.end) {
            tail = 1;
            tailValue = f.childCount;
          }
          break;
        }
      }
      if (tail >= 0) {
        this.#bj = j;
        bx[n++] = j;
        if (tail === 1) bx[n++] = tailValue;
        this.#bn = n;
        return true;
      }
    }
    if (seg.descendant) {
      bx[0] = now;
      this.#bn = 1;
      this.#bj = -1;
      return true;
    }
    return false;
  }
}

const CHECKPOINT_BYTES = 256 * 1024;

/** Perf: shared by every container without partial matches (never mutated). */
const NO_THREADS: Thread[] = [];

/**
 * The order of a selected child among its selector's selections: by position for wildcards and
 * filters, by index (reversed for a negative step) for slices, none for single selections.
 */
function selectorOrder(sel: Selector, index: number, start: number): number {
  switch (sel.kind) {
    case "wildcard":
    case "filter":
      return start;
    case "slice":
      return (sel.step ?? 1) > 0 ? index : -index;
    default:
      return 0;
  }
}

/**
 * `threads` with `thread` added. Perf: a one-element literal is allocated at its size (an empty
 * array grows to 17).
 */
function withThread(threads: Thread[], thread: Thread): Thread[] {
  if (threads === NO_THREADS) return [thread];
  threads.push(thread);
  return threads;
}

/**
 * `base` followed by the first `extra` of `a`, `b`, `c`: an order key one segment deeper. Perf: one
 * allocation at the final size (an array spread goes through the iteration protocol).
 */
function extendKey(base: number[], extra: 2 | 3, a: number, b: number, c: number): number[] {
  const n = base.length;
  const key = new Array<number>(n + extra);
  for (let i = 0; i < n; i++) key[i] = base[i];
  key[n] = a;
  key[n + 1] = b;
  if (extra === 3) key[n + 2] = c;
  return key;
}

function bit(j: number): number {
  return j < 30 ? 1 << j : 0;
}

function effective(d: Decision): number {
  let st = ACCEPTED;
  for (let x: Decision | null = d; x; x = x.parent) {
    if (x.state === REJECTED) return REJECTED;
    if (x.state === PENDING) st = PENDING;
  }
  return st;
}

function compareKeys(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}

/** Entry key vs the bound `prefix ++ extra[0..n)`, a prefix-minimum ("that, then anything"). */
function compareKeyToBound(key: number[], prefix: number[], extra: number[], n: number): number {
  const p = prefix.length;
  for (let i = 0; i < p; i++) if (key[i] !== prefix[i]) return key[i] < prefix[i] ? -1 : 1;
  for (let i = 0; i < n; i++) {
    const k = key[p + i];
    if (k !== extra[i]) return k < extra[i] ? -1 : 1;
  }
  return 1;
}

function entryLess(a: Entry, b: Entry): boolean {
  const c = compareKeys(a.key, b.key);
  return c < 0 || (c === 0 && a.seq < b.seq);
}

function childPointer(parentPointer: string, name: string | null, index: number): string {
  return `${parentPointer}/${name !== null ? escapePointerToken(name) : String(index)}`;
}

function stepKind(step: ResumeStep): number {
  return typeof step === "number" ? KIND_ARRAY : KIND_OBJECT;
}

function newContainer(kind: number, full: boolean): Map<string, Value> | Value[] | PartialArray {
  if (kind === KIND_OBJECT) return new Map<string, Value>();
  return full ? [] : new PartialArray(0, new Map());
}

function childProjection(
  parent: BuildLevel,
  name: string | null,
  index: number,
): Projection | null {
  if (parent.proj === null) return null;
  if (parent.full) {
    parent.count++;
    return parent.proj;
  }
  parent.count++;
  if (name !== null) return parent.proj.names?.get(name) ?? null;
  return parent.proj.indexes?.get(index) ?? null;
}

function attach(parent: BuildLevel, name: string | null, index: number, value: Value): void {
  const c = parent.container;
  if (c instanceof Map) c.set(name!, value);
  else if (Array.isArray(c)) c.push(value);
  else if (c instanceof PartialArray) c.items.set(index, value);
}

function internal(message: string): PagewiseError {
  return new PagewiseError("INTERNAL_ERROR", `Internal error in the JSON query engine: ${message}`);
}
