/**
 * @module
 * The search scan: walks a directory (same order and filters as `list`), reads each candidate file
 * in chunks, skips binary files, and matches line by line. Protocol-free and synchronous per file
 * so that it runs unchanged in a worker thread (see pool.ts), where a pattern only V8 can run is
 * stopped by terminating the thread.
 *
 * What a scan returns is bounded: the requested window of matches (at most `limit`, each line
 * clamped to `maxChars` around its match) and a count. A full scan (`stopEarly` false, `offset`
 * window) counts every match: the exact total. A scan that stops early returns as soon as its page
 * is collected and one more match is seen (so `more` is known); its count is then a lower bound.
 * A continuation (`after` window) walks only from the cursor's file on (resume-walk.ts).
 *
 * Per file: open (through a confined directory descriptor, confine.ts), fstat, one read when the
 * file fits a chunk, close. Lines are found by byte search: a required literal (`Buffer.indexOf`)
 * or the RE2 program run over the chunk's bytes finds candidate lines, and only those are decoded
 * and matched. Memory: one chunk plus the longest line (≤ MAX_SEARCH_LINE_BYTES) at a time.
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { type BigIntStats, closeSync, fstatSync, readSync } from "node:fs";
import { identityKey, PagewiseError } from "../../core/index.js";
import { BINARY_SNIFF_BYTES, MAX_SEARCH_LINE_BYTES, SEARCH_CHUNK_BYTES } from "../limits.js";
import {
  type ByteMatcher,
  byteMatcher,
  type CompiledPattern,
  chunkMatcher,
  compileGlob,
  type LineMatcher,
  lineMatcher,
} from "../pattern/index.js";
import { countNewlineBytes } from "../shared/byte-source.js";
import { compareCodePoints, type WalkEntry, walk } from "../walk/index.js";
import { ConfinedOpener } from "./confine.js";
import { walkFrom } from "./resume-walk.js";

/** Bytes of a file's identity hash kept in a search cursor. */
export const FILE_TAG_BYTES = 6;

const NEWLINE = 0x0a;
const CR = 0x0d;

/** A match position: matches are ordered by (path, lineStart, ordinal within the line). */
export interface MatchPosition {
  readonly path: string;
  readonly lineStart: number;
  readonly ordinal: number;
  /**
   * identityTag of the file when the match was served: a continuation that would read that file
   * again after it changed is CONTENT_CHANGED (its earlier lines came from the old version).
   */
  readonly fileTag?: string;
}

/** A short hash of (device, inode, size, mtime ns, ctime ns): a same-size rewrite changes ctime. */
export function identityTag(st: BigIntStats): string {
  return tagOfIdentity(identityKey(st));
}

function tagOfIdentity(key: string): string {
  return createHash("sha256")
    .update(key)
    .digest()
    .subarray(0, FILE_TAG_BYTES)
    .toString("base64url");
}

export type ScanWindow =
  | { readonly kind: "offset"; readonly offset: number; readonly limit: number }
  | {
      readonly kind: "after";
      readonly after: MatchPosition;
      readonly limit: number;
      /** Where to start reading the cursor's file: a line start at or before `after.lineStart`. */
      readonly resume?: { readonly byte: number; readonly line: number };
    };

export interface ScanJob {
  readonly dir: string;
  /** The name of the one file of `dir` to scan (a search of a file): no walk, no ignore rules. */
  readonly file?: string;
  readonly ancestors: readonly string[];
  readonly includeHidden: boolean;
  readonly respectGitignore: boolean;
  readonly glob?: string;
  readonly maxWalkEntries: number;
  /** Compiled in the calling thread; a plain object, so it crosses to the worker as is. */
  readonly pattern: CompiledPattern;
  readonly context: number;
  readonly maxChars: number;
  readonly window: ScanWindow;
  /** Stop once the page is collected and one more match is seen (no exact total). */
  readonly stopEarly: boolean;
  /**
   * Scan only the candidate files whose walk ordinal is `index` modulo `count` (the other shards
   * scan the rest, in other threads); matches carry their file's ordinal for the merge.
   */
  readonly shard?: { readonly index: number; readonly count: number };
  /**
   * A page never holds items whose text adds up to more than this many characters (the budget
   * times the estimator's units-per-token bound); a scan that stops early stops collecting there
   * instead of at `limit`, so a small budget with a large limit does not read the rest of the tree.
   */
  readonly maxPageChars?: number;
}

export interface RawMatch {
  path: string;
  line: number;
  column: number;
  text: string;
  truncated: boolean;
  /** 1-based code-point column of `text`'s first character in the line, when truncated. */
  textColumn?: number;
  before?: string[];
  after?: string[];
  contextTruncated?: boolean;
  /** Byte offsets of the line without its terminator (for a line cursor). */
  lineStart: number;
  lineEnd: number;
  ordinal: number;
  /** Line start and number where a continuation after this match starts reading. */
  resumeByte: number;
  resumeLine: number;
  /** File identity when the match was read (for the line cursor's version). */
  ident: string;
  /** identityTag of the file (for the search cursor). */
  fileTag: string;
  /** The file's position among the walk's candidate files (orders the shards' matches). */
  fileOrdinal: number;
}

export interface ScanSkipped {
  binary: number;
  long_lines: number;
  unreadable_files: number;
  unreadable_directories: number;
}

export interface ScanResult {
  /**
   * Matches counted from the window's start: for an `offset` window, every match before and in
   * the scan (exact unless `stopEarly`); for an `after` window, the matches after the cursor seen.
   */
  counted: number;
  /** Index of `items[0]` among all matches (offset windows; `after` windows: 0, the caller knows). */
  offset: number;
  items: RawMatch[];
  /** A match exists after the items (as far as this scan read). */
  more: boolean;
  /** Present when every candidate file was read in this scan. */
  skipped?: ScanSkipped;
  filesRead: number;
  bytesRead: number;
  /** Directory descriptors opened for confinement (counted, for tests). */
  dirsOpened: number;
}

export interface ScanHooks {
  /** Called per chunk and per file; may throw to stop the scan. */
  tick?(filesRead: number, bytesRead: number): void;
  signal?: AbortSignal;
}

/** Thrown inside the walk's visitor to end the walk once the page is complete. */
class StopWalk extends Error {}

/** Runs one scan. */
export async function runScan(job: ScanJob, hooks: ScanHooks = {}): Promise<ScanResult> {
  const scanner = new Scanner(job, hooks);
  const opener = new ConfinedOpener(job.dir);
  const glob = compileGlob(job.glob);
  let ordinal = 0;
  const visit = (entry: WalkEntry) => {
    if (entry.type !== "file" || (glob && !glob(entry.path))) return;
    const fileOrdinal = ordinal++;
    if (job.shard && fileOrdinal % job.shard.count !== job.shard.index) return;
    scanner.visitFile(entry, opener, fileOrdinal);
    if (scanner.done()) throw new StopWalk();
  };
  const walkOptions = {
    includeHidden: job.includeHidden,
    respectGitignore: job.respectGitignore,
    maxEntries: job.maxWalkEntries,
    ancestors: job.ancestors,
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    onProgress: () => hooks.tick?.(scanner.filesRead, scanner.bytesRead),
  };
  let complete = true;
  try {
    const w = job.window;
    const stats =
      job.file !== undefined
        ? visitOne(job.dir, job.file, visit)
        : w.kind === "after"
          ? await walkFrom(job.dir, w.after.path, walkOptions, visit)
          : await walk(job.dir, { ...walkOptions, recursive: true }, visit);
    scanner.skipped.unreadable_directories = stats.unreadable;
  } catch (err) {
    if (!(err instanceof StopWalk)) throw err;
    complete = false;
  } finally {
    opener.close();
  }
  return scanner.result(complete && job.window.kind === "offset", opener.dirsOpened);
}

/** Visits the one file a search of a file scans, as the walk would list it. */
function visitOne(dir: string, name: string, visit: (entry: WalkEntry) => void) {
  const absolute = dir === "/" ? `/${name}` : `${dir}/${name}`;
  visit({ path: name, absolute, statPath: absolute, type: "file" });
  return { unreadable: 0 };
}

/** One scan's state: the window, the items collected, counts; one file at a time. */
class Scanner {
  readonly skipped: ScanSkipped = {
    binary: 0,
    long_lines: 0,
    unreadable_files: 0,
    unreadable_directories: 0,
  };
  filesRead = 0;
  bytesRead = 0;
  private readonly items: RawMatch[] = [];
  /** Matches counted in whole files (offset window: from the start; after window: after the cursor). */
  private total = 0;
  /** Matches counted so far in the current file. */
  private fileCount = 0;
  /** Characters of the collected items' paths, texts and leading context: a lower bound of their page. */
  private itemChars = 0;
  private buf = Buffer.allocUnsafe(SEARCH_CHUNK_BYTES * 2);
  private readonly re: LineMatcher;
  /** Finds candidate lines in a chunk's bytes (context 0 only): a literal or the RE2 program. */
  private readonly literalBytes: Buffer | undefined;
  private readonly bytePre: ByteMatcher | undefined;
  /** The JavaScript engine's pre-scan over a chunk's decoded text. */
  private readonly textPre: LineMatcher | undefined;
  private readonly after: MatchPosition | undefined;
  private readonly offsetStart: number;
  private readonly limit: number;
  private readonly maxPageChars: number;

  // The current file.
  private relPath = "";
  private fileOrdinal = 0;
  private ident = "";
  private fileTag = "";
  /** Comparison of the current file's path with the cursor's (1 without a cursor). */
  private cmp = 1;
  private lineNo = 1;
  private pending: RawMatch[] = [];
  private ring: { text: string; clamped: boolean; byte: number; line: number }[] = [];

  constructor(
    private readonly job: ScanJob,
    private readonly hooks: ScanHooks,
  ) {
    const p = job.pattern;
    this.re = lineMatcher(p);
    const byteScan = job.context === 0;
    this.literalBytes =
      byteScan && p.literal.length >= 2 ? Buffer.from(p.literal, "utf8") : undefined;
    this.bytePre =
      byteScan && !this.literalBytes && p.engine === "re2" ? byteMatcher(p) : undefined;
    this.textPre =
      byteScan && !this.literalBytes && p.engine === "js" && p.prefilter
        ? chunkMatcher(p)
        : undefined;
    const w = job.window;
    this.after = w.kind === "after" ? w.after : undefined;
    this.offsetStart = w.kind === "offset" ? w.offset : 0;
    this.limit = w.limit;
    this.maxPageChars = job.maxPageChars ?? Number.POSITIVE_INFINITY;
  }

  /** Matches counted from the window's start, the current file's included. */
  private seen(): number {
    const n = this.total + this.fileCount;
    return this.after ? n : Math.max(0, n - this.offsetStart);
  }

  private pageFull(): boolean {
    return this.items.length >= this.limit || this.itemChars >= this.maxPageChars;
  }

  /** The page is collected and a match after it was seen: a scan that stops early ends here. */
  done(): boolean {
    return this.job.stopEarly && this.pageFull() && this.seen() > this.items.length;
  }

  result(complete: boolean, dirsOpened: number): ScanResult {
    return {
      counted: this.total,
      offset: this.after ? 0 : this.offsetStart,
      items: this.items,
      more: this.seen() > this.items.length,
      ...(complete ? { skipped: this.skipped } : {}),
      filesRead: this.filesRead,
      bytesRead: this.bytesRead,
      dirsOpened,
    };
  }

  visitFile(entry: WalkEntry, opener: ConfinedOpener, fileOrdinal: number): void {
    this.fileOrdinal = fileOrdinal;
    const cmp = this.after ? compareCodePoints(entry.path, this.after.path) : 1;
    if (cmp < 0) return;
    let fd: number;
    try {
      fd = opener.open(entry.absolute);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.skipped.unreadable_files++;
      return;
    }
    if (fd < 0) return; // not inside the searched directory (swapped meanwhile)
    try {
      const st = fstatSync(fd, { bigint: true });
      if (!st.isFile()) return;
      this.filesRead++;
      this.scanFile(entry.path, fd, st, cmp);
      this.hooks.tick?.(this.filesRead, this.bytesRead);
    } catch (err) {
      if (err instanceof PagewiseError || (err as Error).name === "AbortError") throw err;
      this.skipped.unreadable_files++;
    } finally {
      closeSync(fd);
    }
  }

  private tag(): string {
    if (this.fileTag === "") this.fileTag = tagOfIdentity(this.ident);
    return this.fileTag;
  }

  /** Scans one open file; its matches are dropped when it turns out binary or too long. */
  private scanFile(relPath: string, fd: number, st: BigIntStats, cmp: number): void {
    this.relPath = relPath;
    // Perf: the identity is read before the content (so a later change shows); its hash is
    // computed only for files that serve a match.
    this.ident = identityKey(st);
    this.fileTag = "";
    this.cmp = cmp;
    const w = this.job.window;
    if (cmp === 0 && this.after?.fileTag !== undefined && this.tag() !== this.after.fileTag) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        `${relPath} changed since the previous page, which ended inside it. Search again without the cursor.`,
        { hint: "Call again with the same arguments but no cursor." },
      );
    }
    let position = 0;
    this.lineNo = 1;
    if (cmp === 0 && w.kind === "after" && w.resume) {
      position = w.resume.byte;
      this.lineNo = w.resume.line;
    }
    this.fileCount = 0;
    this.pending = [];
    this.ring = [];
    const itemsAtStart = this.items.length;
    const charsAtStart = this.itemChars;
    const status = this.readFile(fd, Number(st.size), position);
    if (status !== "ok") {
      if (status === "binary") this.skipped.binary++;
      else this.skipped.long_lines++;
      this.items.length = itemsAtStart;
      this.itemChars = charsAtStart;
      this.fileCount = 0;
      return;
    }
    this.total += this.fileCount;
    this.fileCount = 0;
  }

  /**
   * Reads the file from `position` in chunks and hands whole lines on. Perf: a file that fits a
   * chunk is read with one call (a short read of a regular file is its end).
   */
  private readFile(fd: number, size: number, position: number): "ok" | "binary" | "long" {
    let len = 0;
    let first = true;
    for (;;) {
      this.hooks.signal?.throwIfAborted();
      if (len === this.buf.length) {
        if (this.buf.length >= MAX_SEARCH_LINE_BYTES + SEARCH_CHUNK_BYTES) return "long";
        const bigger = Buffer.allocUnsafe(this.buf.length * 2);
        this.buf.copy(bigger, 0, 0, len);
        this.buf = bigger;
      }
      const want = Math.min(
        Math.max(SEARCH_CHUNK_BYTES, size - position + 1),
        this.buf.length - len,
      );
      const n = readSync(fd, this.buf, len, want, position);
      this.bytesRead += n;
      this.hooks.tick?.(this.filesRead, this.bytesRead);
      if (first) {
        first = false;
        const sniff = this.buf.subarray(0, Math.min(n, BINARY_SNIFF_BYTES));
        if (position === 0 && sniff.includes(0)) return "binary";
      }
      position += n;
      len += n;
      const eof = n < want;
      let end: number;
      if (eof) end = len;
      else {
        const lastNl = this.buf.lastIndexOf(NEWLINE, len - 1);
        if (lastNl < 0) {
          if (len > MAX_SEARCH_LINE_BYTES) return "long";
          continue;
        }
        end = lastNl + 1;
      }
      if (end > 0) {
        const region = this.buf.subarray(0, end);
        if (!isUtf8(region)) return "binary";
        const base = position - len;
        const fast = this.literalBytes !== undefined || this.bytePre !== undefined;
        if (fast) this.scanBytes(region, base, eof);
        else this.scanText(region, base);
      }
      if (this.done() && this.pending.length === 0) return "ok";
      if (eof) return "ok";
      this.buf.copy(this.buf, 0, end, len);
      len -= end;
    }
  }

  /**
   * Perf: the hot path for context 0. Candidate lines are found by a byte search over the whole
   * region; lines are counted only up to a candidate (or to the region's end when more of the
   * file follows), and only candidate lines are decoded and matched.
   */
  private scanBytes(region: Buffer, base: number, last: boolean): void {
    const end = region.length;
    let b = 0;
    while (b < end) {
      let idx: number;
      if (this.literalBytes) idx = region.indexOf(this.literalBytes, b);
      else {
        this.bytePre!.lastIndex = b;
        const m = this.bytePre!.exec(region);
        idx = m === null ? -1 : m.index;
      }
      if (idx < 0) {
        if (!last) this.lineNo += countNewlineBytes(region, b, end);
        return;
      }
      const ls = idx === 0 ? 0 : region.lastIndexOf(NEWLINE, idx - 1) + 1;
      if (ls > b) this.lineNo += countNewlineBytes(region, b, ls);
      let le = region.indexOf(NEWLINE, ls);
      const terminated = le >= 0;
      if (!terminated) le = end;
      const contentEnd = terminated && le > ls && region[le - 1] === CR ? le - 1 : le;
      const line = region.toString("utf8", ls, contentEnd);
      this.matchLine(line, base + ls, base + contentEnd, this.lineNo);
      if (this.done()) return;
      b = terminated ? le + 1 : end;
      this.lineNo++;
    }
  }

  /** Lines of a decoded region one by one, with context and the JavaScript pre-scan. */
  private scanText(region: Buffer, base: number): void {
    const text = region.toString("utf8");
    const context = this.job.context;
    const pre = this.textPre;
    let s = 0;
    let b = 0;
    while (s < text.length) {
      if (pre !== undefined) {
        pre.lastIndex = s;
        const m = pre.exec(text);
        if (m === null) {
          for (let nl = text.indexOf("\n", s); nl >= 0; nl = text.indexOf("\n", nl + 1)) {
            this.lineNo++;
          }
          return;
        }
        const ls = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
        while (s < ls) {
          s = text.indexOf("\n", s) + 1;
          b = region.indexOf(NEWLINE, b) + 1;
          this.lineNo++;
        }
      }
      let e = text.indexOf("\n", s);
      let be = region.indexOf(NEWLINE, b);
      const terminated = e >= 0 && be >= 0;
      if (!terminated) {
        e = text.length;
        be = region.length;
      }
      const crlf = terminated && e > s && text.charCodeAt(e - 1) === CR;
      const line = text.slice(s, crlf ? e - 1 : e);
      // Order: this line is after-context of earlier matches, then matched itself (its own
      // matches see the lines before it), then becomes before-context of later lines.
      if (this.pending.length > 0) this.feedPending(line);
      if (!this.done()) this.matchLine(line, base + b, base + (crlf ? be - 1 : be), this.lineNo);
      if (context > 0) {
        const clamped = this.clampContext(line);
        this.ring.push({
          text: clamped,
          clamped: clamped.length < line.length,
          byte: base + b,
          line: this.lineNo,
        });
        if (this.ring.length > context) this.ring.shift();
      }
      if (this.done() && this.pending.length === 0) return;
      s = terminated ? e + 1 : text.length;
      b = terminated ? be + 1 : region.length;
      this.lineNo++;
    }
  }

  private clampContext(line: string): string {
    const maxChars = this.job.maxChars;
    return line.length <= maxChars ? line : line.slice(0, codeUnitFloor(line, maxChars));
  }

  private feedPending(line: string): void {
    const clamped = this.clampContext(line);
    for (const m of this.pending) {
      m.after!.push(clamped);
      if (clamped.length < line.length) m.contextTruncated = true;
    }
    this.pending = this.pending.filter((m) => m.after!.length < this.job.context);
  }

  /** Whether the match at (`byteStart`, `ordinal`) of the current file is to be collected. */
  private wanted(byteStart: number, ordinal: number): boolean {
    const after = this.after;
    if (after) {
      const isAfter =
        this.cmp > 0 ||
        byteStart > after.lineStart ||
        (byteStart === after.lineStart && ordinal > after.ordinal);
      if (!isAfter) return false;
      this.fileCount++;
      return !this.pageFull();
    }
    const index = this.total + this.fileCount++;
    return index >= this.offsetStart && index < this.offsetStart + this.limit;
  }

  /** Every match of the line, in order; collects those in the window. Perf: the inner loop. */
  private matchLine(line: string, byteStart: number, byteEnd: number, lineNumber: number): void {
    const re = this.re;
    re.lastIndex = 0;
    let ordinal = 0;
    let cpIndex = 0;
    let cpCount = 0;
    for (let m = re.exec(line); m !== null; m = re.exec(line)) {
      const idx = m.index;
      const mlen = m[0]!.length;
      if (mlen === 0) re.lastIndex = idx + (isPairAt(line, idx) ? 2 : 1);
      if (this.wanted(byteStart, ordinal++)) {
        cpCount += codePoints(line, cpIndex, idx);
        cpIndex = idx;
        this.collect(line, idx, mlen, cpCount + 1, byteStart, byteEnd, lineNumber, ordinal - 1);
      }
      if (this.done() || re.lastIndex > line.length) break;
    }
  }

  private collect(
    line: string,
    idx: number,
    mlen: number,
    column: number,
    byteStart: number,
    byteEnd: number,
    lineNumber: number,
    ordinal: number,
  ): void {
    const ring = this.ring;
    const maxChars = this.job.maxChars;
    const match: RawMatch = {
      path: this.relPath,
      line: lineNumber,
      column,
      text: line,
      truncated: false,
      lineStart: byteStart,
      lineEnd: byteEnd,
      ordinal,
      resumeByte: ring.length > 0 ? ring[0]!.byte : byteStart,
      resumeLine: ring.length > 0 ? ring[0]!.line : lineNumber,
      ident: this.ident,
      fileTag: this.tag(),
      fileOrdinal: this.fileOrdinal,
    };
    if (line.length > maxChars) {
      let start =
        mlen >= maxChars
          ? idx
          : Math.max(0, Math.min(idx - ((maxChars - mlen) >> 1), line.length - maxChars));
      if (start > 0 && isLowAt(line, start) && isHighAt(line, start - 1)) start--;
      const end = start + codeUnitFloor(line.slice(start, start + maxChars + 1), maxChars);
      match.text = line.slice(start, end);
      match.truncated = true;
      match.textColumn = codePoints(line, 0, start) + 1;
    }
    if (this.job.context > 0) {
      match.before = ring.map((r) => r.text);
      match.after = [];
      if (ring.some((r) => r.clamped)) match.contextTruncated = true;
      this.pending.push(match);
    }
    this.items.push(match);
    this.itemChars += match.path.length + match.text.length;
    for (const b of match.before ?? []) this.itemChars += b.length;
  }
}

function isHighAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff;
}
function isLowAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
}
function isPairAt(s: string, i: number): boolean {
  return isHighAt(s, i) && i + 1 < s.length && isLowAt(s, i + 1);
}

/** Code points in `s[from..to)`. */
function codePoints(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    if (isHighAt(s, i) && i + 1 < to && isLowAt(s, i + 1)) i++;
    n++;
  }
  return n;
}

/** `units` moved down so that `s[0..units)` does not end inside a surrogate pair. */
function codeUnitFloor(s: string, units: number): number {
  if (units >= s.length) return s.length;
  return units > 0 && isHighAt(s, units - 1) && isLowAt(s, units) ? units - 1 : units;
}
