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
 * file fits a chunk, close. Candidate lines are found before anything is matched: a required
 * literal (`Buffer.indexOf` on the bytes), the linear engine's multi-line program over blocks of
 * the raw bytes, or V8's multi-line pre-scan over the chunk (a Latin-1 copy of its bytes when the
 * pattern matches ASCII only, else decoded a piece at a time); only candidates are matched alone.
 * Once the page's window is full, an exact total only counts: matches are not located or built,
 * and a pattern whose matches stay inside lines is counted over a whole piece in one pass.
 *
 * Memory, whatever the file (docs/list-search.md, "Memory per search"): the read buffer (two
 * chunks) and one piece of decoded text, plus, for a pattern whose matches can be long or with
 * `context`, the line being matched held up to MAX_SEARCH_LINE_BYTES (a longer one skips the file
 * once that much is read). A line longer than the buffer is matched a window at a time when every
 * match is short (`reachUnits`), so it is never held whole. Collected items are copies, so that
 * none keeps a chunk's or a window's text alive.
 */
import { isAscii, isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { type BigIntStats, closeSync, fstatSync, readSync } from "node:fs";
import path from "node:path";
import { identityKey, PagewiseError } from "../../core/index.js";
import { BINARY_SNIFF_BYTES, MAX_SEARCH_LINE_BYTES, SEARCH_CHUNK_BYTES } from "../limits.js";
import {
  type ByteMatcher,
  byteMatcher,
  type CompiledPattern,
  chunkMatcher,
  compileGlob,
  lineMatcher,
  literalCounter,
  type Matcher,
} from "../pattern/index.js";
import { countNewlineBytes } from "../shared/byte-source.js";
import { compareCodePoints, type GitignoreSkip, type WalkEntry, walk } from "../walk/index.js";
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

/** `.gitignore` files whose rules a scan's walk did not apply: `list`'s `skipped` members. */
export interface ScanGitignoreSkipped {
  gitignore_files: number;
  /** The first of them met, relative to the searched directory, and why. */
  first_gitignore: { readonly path: string } & GitignoreSkip;
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
  /** Present when the walk met `.gitignore` files it did not apply (complete scan or not). */
  gitignoreSkipped?: ScanGitignoreSkipped;
  filesRead: number;
  bytesRead: number;
  /** Directory descriptors opened for confinement (counted, for tests). */
  dirsOpened: number;
  /** The largest read buffer the scan held, in bytes (counted, for tests; one scan, not merged). */
  bufferBytes?: number;
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
  // By absolute path: a continuation's walks read the `.gitignore` files above them again.
  const ignoreSkips = new Map<string, GitignoreSkip>();
  const walkOptions = {
    onGitignoreSkipped: (absolute: string, skip: GitignoreSkip) => {
      if (!ignoreSkips.has(absolute)) ignoreSkips.set(absolute, skip);
    },
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
  const result = scanner.result(complete && job.window.kind === "offset", opener.dirsOpened);
  const [first] = ignoreSkips;
  if (first) {
    const shown = path.relative(job.dir, first[0]).split(path.sep).join("/");
    result.gitignoreSkipped = {
      gitignore_files: ignoreSkips.size,
      first_gitignore: { path: shown, ...first[1] },
    };
  }
  return result;
}

/** Visits the one file a search of a file scans, as the walk would list it. */
function visitOne(dir: string, name: string, visit: (entry: WalkEntry) => void) {
  const absolute = dir === "/" ? `/${name}` : `${dir}/${name}`;
  visit({ path: name, absolute, statPath: absolute, type: "file" });
  return { unreadable: 0 };
}

/**
 * Bytes of whole lines decoded into one string at a time. Perf: V8 makes a string of 128 KiB or more
 * in its large-object space, ~100 times slower than a young one (5 ms against 30 µs for 64 KiB of
 * ASCII here): chunks are decoded in pieces below that.
 */
const PIECE_BYTES = 64 * 1024;

/** The end of a piece of whole lines starting at `from` (about PIECE_BYTES, or one longer line). */
function pieceEndAt(region: Buffer, from: number): number {
  if (from + PIECE_BYTES >= region.length) return region.length;
  const nl = region.lastIndexOf(NEWLINE, from + PIECE_BYTES - 1);
  if (nl >= from) return nl + 1;
  const next = region.indexOf(NEWLINE, from + PIECE_BYTES);
  return next < 0 ? region.length : next + 1;
}

/** Bytes of whole lines the linear engine's multi-line pre-scan asks about at once. */
const BLOCK_BYTES = 16 * 1024;
/**
 * Bytes of a long line decoded and matched at once: a piece (see PIECE_BYTES), large beside what a
 * window keeps around a match.
 */
const WINDOW_BYTES = PIECE_BYTES;

/** Where a long line's matching stands between its windows. */
interface LongLine {
  /** Absolute offset of the line's first byte. */
  readonly start: number;
  /** Code points of the line before the search's resume position. */
  cpAtFrom: number;
  /** Matches of the line so far. */
  ordinal: number;
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
  private readonly re: Matcher;
  /** The linear engine answers "any match?" much faster than "where?": asked first per line. */
  private readonly testFirst: boolean;
  /** Finds candidate lines in a chunk's bytes (context 0 only): a literal every match contains. */
  private readonly literalBytes: Buffer | undefined;
  /** The linear engine over raw bytes: candidate lines, and counts without decoding. */
  private readonly bytes: ByteMatcher | undefined;
  /** V8's pre-scan over a chunk's decoded text (context 0 only). */
  private readonly textPre: RegExp | undefined;
  /** Counts a plain literal's matches on the raw bytes (lines-local literals). */
  private readonly literalCount: ((bytes: Buffer, from: number, to: number) => number) | undefined;
  /**
   * V8's pre-scan may read the bytes as Latin-1, not decoded, to find candidate lines: the pattern
   * matches ASCII only (context 0, pre-scan allowed).
   */
  private readonly latin1Pre: boolean;
  /** The piece of the region that pre-scan last read. */
  private readonly piece: { region: Buffer; start: number; end: number; text: string } = {
    region: Buffer.alloc(0),
    start: 0,
    end: 0,
    text: "",
  };
  /** V8's engine for counting a long line's windows (`test` moves past a match without building it). */
  private readonly counter: RegExp | undefined;
  /**
   * Lines longer than the buffer are matched a window at a time, never held whole: context 0 and
   * matches of a bounded length (the pattern's `reachUnits`).
   */
  private readonly streamable: boolean;
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
    this.testFirst = p.engine === "linear";
    const byteScan = job.context === 0;
    this.literalBytes =
      byteScan && p.literal.length >= 2 ? Buffer.from(p.literal, "utf8") : undefined;
    this.bytes = p.engine === "linear" ? byteMatcher(p) : undefined;
    this.textPre = byteScan && p.engine !== "linear" && p.prefilter ? chunkMatcher(p) : undefined;
    this.literalCount = p.lineLocal ? literalCounter(p) : undefined;
    this.latin1Pre = this.textPre !== undefined && p.asciiOnly;
    this.streamable =
      byteScan &&
      p.engine === "bounded" &&
      p.reachUnits > 0 &&
      streamMargin(p.reachUnits, job.maxChars) <= WINDOW_BYTES / 2;
    this.counter = this.streamable && !p.nullable ? new RegExp(p.source, p.flags) : undefined;
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

  /**
   * Every later match of this scan lies past its window, and no item waits for context: only the
   * count is left to find (an exact total), so matches are counted without being located or built.
   */
  private countOnly(): boolean {
    return (
      !this.after &&
      !this.job.stopEarly &&
      this.pending.length === 0 &&
      this.total + this.fileCount >= this.offsetStart + this.limit
    );
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
      bufferBytes: this.buf.length,
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
   * chunk is read with one call (a short read of a regular file is its end). Memory: the buffer
   * holds one chunk and the line being read; a line longer than the buffer is matched in windows
   * when the pattern allows it (streamLine), else held up to MAX_SEARCH_LINE_BYTES, past which
   * the file is skipped before the line is read further.
   */
  private readFile(fd: number, size: number, position: number): "ok" | "binary" | "long" {
    let len = 0;
    let first = true;
    for (;;) {
      this.hooks.signal?.throwIfAborted();
      if (len === this.buf.length) {
        // The buffer holds part of one line and nothing else.
        if (this.streamable) {
          const rest = this.streamLine(fd, position, len);
          if (rest === "binary") return rest;
          ({ position, len } = rest);
          if (this.done() && this.pending.length === 0) return "ok";
          continue;
        }
        if (this.buf.length >= MAX_SEARCH_LINE_BYTES + SEARCH_CHUNK_BYTES) return "long";
        const bigger = Buffer.allocUnsafe(
          Math.min(this.buf.length * 2, MAX_SEARCH_LINE_BYTES + SEARCH_CHUNK_BYTES),
        );
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
          if (!this.streamable && len > MAX_SEARCH_LINE_BYTES) return "long";
          continue;
        }
        end = lastNl + 1;
      }
      if (end > 0) {
        const region = this.buf.subarray(0, end);
        if (!isUtf8(region)) return "binary";
        this.scanRegion(region, position - len, eof);
      }
      if (this.done() && this.pending.length === 0) return "ok";
      if (eof) return "ok";
      this.buf.copy(this.buf, 0, end, len);
      len -= end;
    }
  }

  /** Whole lines of the file (valid UTF-8), at absolute offset `base`. */
  private scanRegion(region: Buffer, base: number, last: boolean): void {
    if (this.countOnly()) this.countLines(region, 0);
    else if (this.job.context === 0 && (this.literalBytes || this.bytes || this.latin1Pre)) {
      this.scanBytes(region, base, last);
    } else {
      // Perf: decoded a piece at a time (see PIECE_BYTES).
      for (let from = 0; from < region.length; ) {
        const to = pieceEndAt(region, from);
        if (this.countOnly()) {
          this.countLines(region, from);
          return;
        }
        this.scanText(region.subarray(from, to), base + from);
        if (this.done() && this.pending.length === 0) return;
        from = to;
      }
    }
  }

  /**
   * The region's text for V8 from `from` to `to`. Perf: ASCII needs no decoding (a Latin-1 copy is
   * the same text); for counting only, neither does any text when the pattern matches ASCII only.
   */
  private textOf(region: Buffer, from: number, to: number, countOnly: boolean): string {
    const bytes = region.subarray(from, to);
    const ascii = (countOnly && this.job.pattern.asciiOnly) || isAscii(bytes);
    return bytes.toString(ascii ? "latin1" : "utf8");
  }

  /**
   * Perf: the hot path for context 0. Candidate lines are found on the raw bytes (a literal, or
   * the linear engine's multi-line pre-scan); lines are counted only up to a candidate (or to the
   * region's end when more of the file follows), and only candidate lines are decoded and matched.
   */
  private scanBytes(region: Buffer, base: number, last: boolean): void {
    const end = region.length;
    let b = 0;
    while (b < end) {
      const ls = this.nextCandidate(region, b);
      if (ls < 0) {
        if (!last) this.lineNo += countNewlineBytes(region, b, end);
        return;
      }
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
      if (this.countOnly()) {
        this.countLines(region, b);
        return;
      }
    }
  }

  /** The start of the first line at or after the line start `from` that may match, or -1. */
  private nextCandidate(region: Buffer, from: number): number {
    if (this.literalBytes) {
      const idx = region.indexOf(this.literalBytes, from);
      return idx <= 0 ? idx : region.lastIndexOf(NEWLINE, idx - 1) + 1;
    }
    if (this.latin1Pre) {
      // V8's pre-scan over a Latin-1 copy of a piece (whose offsets are the bytes').
      const pre = this.textPre!;
      const piece = this.piece;
      for (let b = from; b < region.length; b = piece.end) {
        if (piece.region !== region || b < piece.start || b >= piece.end) {
          piece.region = region;
          piece.start = b;
          piece.end = pieceEndAt(region, b);
          piece.text = region.toString("latin1", b, piece.end);
        }
        pre.lastIndex = b - piece.start;
        const m = pre.exec(piece.text);
        if (m !== null) {
          const idx = piece.start + m.index;
          return idx === 0 ? 0 : region.lastIndexOf(NEWLINE, idx - 1) + 1;
        }
      }
      return -1;
    }
    const bytes = this.bytes!;
    for (let b = from; b < region.length; ) {
      const blockEnd = blockEndAt(region, b);
      if (bytes.mayMatch(region.subarray(b, blockEnd))) {
        for (let ls = b; ls < blockEnd; ) {
          const le = lineEndAt(region, ls, blockEnd);
          if (bytes.test(region.subarray(ls, contentEndAt(region, ls, le)))) return ls;
          ls = le + 1;
        }
      }
      b = blockEnd;
    }
    return -1;
  }

  /**
   * The matches of the region's lines from the line start `from` on, counted only (countOnly).
   * Perf: a pattern whose matches stay inside lines is counted over the whole decoded region in
   * one pass; the linear engine counts line by line on the raw bytes, never decoding them.
   */
  private countLines(region: Buffer, from: number): void {
    if (from >= region.length) return;
    if (this.literalCount) {
      this.fileCount += this.literalCount(region, from, region.length);
      return;
    }
    if (this.bytes) {
      this.fileCount += countLinearLines(this.bytes, region, from);
      return;
    }
    if (this.literalBytes && region.indexOf(this.literalBytes, from) < 0) return;
    for (let b = from; b < region.length; ) {
      const to = pieceEndAt(region, b);
      this.fileCount += this.countText(this.textOf(region, b, to, true));
      b = to;
    }
  }

  /** The matches of whole lines of decoded text (V8's engine), counted only. */
  private countText(text: string): number {
    if (this.job.pattern.lineLocal) return this.re.count(text);
    const pre = this.textPre;
    let n = 0;
    for (let s = 0; s < text.length; ) {
      if (pre !== undefined) {
        pre.lastIndex = s;
        const m = pre.exec(text);
        if (m === null) break;
        s = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
      }
      let e = text.indexOf("\n", s);
      const terminated = e >= 0;
      if (!terminated) e = text.length;
      const crlf = terminated && e > s && text.charCodeAt(e - 1) === CR;
      n += this.re.count(text.slice(s, crlf ? e - 1 : e));
      s = e + 1;
    }
    return n;
  }

  /** Lines of a decoded region one by one, with context and V8's pre-scan. */
  private scanText(region: Buffer, base: number): void {
    const text = this.textOf(region, 0, region.length, false);
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
      if (this.countOnly()) {
        if (s < text.length) this.fileCount += this.countText(text.slice(s));
        return;
      }
    }
  }

  /**
   * The rest of a line longer than the buffer, for a pattern whose matches have a bounded length:
   * matched a window at a time and never held whole (memory: the buffer, and one window's text).
   * The buffer holds the line's first `len` bytes (no terminator among them), read up to
   * `position`; returns once the line is done, with the bytes after its terminator at the
   * buffer's start.
   */
  private streamLine(
    fd: number,
    position: number,
    len: number,
  ): { position: number; len: number } | "binary" {
    const buf = this.buf;
    const line: LongLine = { start: position - len, cpAtFrom: 0, ordinal: 0 };
    const firstItem = this.items.length;
    let base = line.start; // absolute offset of buf[0]
    let from = 0; // where the search resumes
    let checked = 0; // bytes validated as UTF-8
    let scanned = len; // bytes known to hold no line terminator
    let eof = false;
    for (;;) {
      this.hooks.signal?.throwIfAborted();
      const nl = buf.subarray(0, len).indexOf(NEWLINE, scanned);
      const final = nl >= 0 || eof;
      // Match up to the line's end, or else up to the last whole character here.
      let limit: number;
      if (final) limit = nl >= 0 ? (nl > 0 && buf[nl - 1] === CR ? nl - 1 : nl) : len;
      else {
        limit = len - 1;
        while (limit > from && (buf[limit]! & 0xc0) === 0x80) limit--;
      }
      if (!isUtf8(buf.subarray(checked, final && nl >= 0 ? nl : limit))) return "binary";
      checked = limit;
      for (;;) {
        const last = limit - from <= WINDOW_BYTES;
        let end = limit;
        if (!last) {
          end = from + WINDOW_BYTES;
          while ((buf[end]! & 0xc0) === 0x80) end--;
        }
        const resume = this.matchWindow(line, this.contextStart(from), from, end, final && last);
        if (this.done()) {
          if (this.items.length > firstItem) {
            if (final) this.setLineEnd(firstItem, base + limit);
            else this.finishLine(fd, position, len, firstItem);
          }
          return { position, len: 0 };
        }
        from = resume;
        if (last) break;
      }
      if (final) {
        this.setLineEnd(firstItem, base + limit);
        const rest = nl >= 0 ? nl + 1 : len;
        buf.copy(buf, 0, rest, len);
        this.lineNo++;
        return { position, len: len - rest };
      }
      scanned = len;
      // Keep what a later match may need (from `from`, and context before it), read more.
      const keep = this.contextStart(from);
      buf.copy(buf, 0, keep, len);
      len -= keep;
      from -= keep;
      checked -= keep;
      scanned -= keep;
      base += keep;
      const want = buf.length - len;
      const n = readSync(fd, buf, len, want, position);
      this.bytesRead += n;
      this.hooks.tick?.(this.filesRead, this.bytesRead);
      position += n;
      len += n;
      eof = n < want;
    }
  }

  /** Where a long line's window text starts: a clamped item's lead before `from`, whole characters. */
  private contextStart(from: number): number {
    let start = Math.max(0, from - contextBytesFor(this.job.maxChars));
    while (start < from && (this.buf[start]! & 0xc0) === 0x80) start++;
    return start;
  }

  private setLineEnd(firstItem: number, end: number): void {
    for (let k = firstItem; k < this.items.length; k++) this.items[k]!.lineEnd = end;
  }

  /**
   * Matches `buf[from, end)` of a long line (the text decoded from `textStart`: context a clamped
   * item shows before its match) and returns where the search resumes. Unless the window holds
   * the line's end (`final`), only matches that start far enough from the window's end count: the
   * engine reads at most `reachUnits` past a match's start, and a clamped item shows `maxChars`
   * around it, so such a match is the one the whole line has; the search resumes at the first
   * position that is not that far.
   */
  private matchWindow(
    line: LongLine,
    textStart: number,
    from: number,
    end: number,
    final: boolean,
  ): number {
    const buf = this.buf;
    if (this.countOnly() && this.literalCount && this.job.pattern.exactLiteral.length === 1) {
      // Perf: a one-character literal cannot straddle the window's end (a character boundary):
      // counted on the bytes, nothing decoded.
      this.fileCount += this.literalCount(buf, from, end);
      return end;
    }
    const counting = this.countOnly() && this.counter !== undefined;
    // Perf: a Latin-1 copy where it is the same text (ASCII), or where only counts are wanted of
    // a pattern that matches ASCII only; its offsets are then the bytes'.
    const ascii = isAscii(buf.subarray(textStart, end));
    const latin1 = ascii || (counting && this.job.pattern.asciiOnly);
    const text = buf.toString(latin1 ? "latin1" : "utf8", textStart, end);
    const fromUnits = latin1 ? from - textStart : utf16Units(buf, textStart, from);
    const margin = Math.max(this.job.pattern.reachUnits, this.job.maxChars + 1);
    const safeEnd = final ? text.length : text.length - margin; // last safe match start
    const cpsOf = (a: number, b: number) => (ascii ? b - a : codePoints(text, a, b));
    let pos = fromUnits;
    let cpIndex = fromUnits;
    let cp = line.cpAtFrom;
    if (counting) {
      // Perf: `test` moves past each match without building it; a match ending at or before
      // `safeEnd` started there too.
      const re = this.counter!;
      for (re.lastIndex = pos; re.test(text); pos = re.lastIndex) {
        if (re.lastIndex > safeEnd) {
          // It may still start early enough: ask where.
          re.lastIndex = pos;
          const m = re.exec(text)!;
          if (m.index > safeEnd) break;
          re.lastIndex = m.index + m[0]!.length;
        }
        this.fileCount++;
      }
    } else {
      const re = this.re;
      re.reset(text);
      while (pos <= text.length && re.find(pos) && re.start <= safeEnd) {
        const idx = re.start;
        const mlen = re.end - idx;
        pos = mlen > 0 ? re.end : re.end + (isPairAt(text, idx) ? 2 : 1);
        const ordinal = line.ordinal++;
        if (this.wanted(line.start, ordinal)) {
          cp += cpsOf(cpIndex, idx);
          cpIndex = idx;
          this.collect(text, idx, mlen, cp + 1, line.start, -1, this.lineNo, ordinal, final);
        }
        if (this.done()) return from;
      }
    }
    let resume = final ? text.length : Math.max(pos, safeEnd + 1);
    if (resume > pos && isLowAt(text, resume) && isHighAt(text, resume - 1)) resume--;
    resume = Math.min(resume, text.length);
    line.cpAtFrom = cp + cpsOf(cpIndex, resume);
    return latin1
      ? textStart + resume
      : from + Buffer.byteLength(text.slice(fromUnits, resume), "utf8");
  }

  /** Reads on to the end of a long line whose items are collected: their line cursors need it. */
  private finishLine(fd: number, position: number, len: number, firstItem: number): void {
    const buf = this.buf;
    let base = position - len;
    let nl = buf.subarray(0, len).indexOf(NEWLINE);
    let before = -1; // the byte before buf[0]
    while (nl < 0) {
      this.hooks.signal?.throwIfAborted();
      if (len > 0) before = buf[len - 1]!;
      base += len;
      len = readSync(fd, buf, 0, buf.length, position);
      this.bytesRead += len;
      this.hooks.tick?.(this.filesRead, this.bytesRead);
      position += len;
      if (len === 0) break;
      nl = buf.subarray(0, len).indexOf(NEWLINE);
    }
    let end = base + Math.max(nl, 0);
    if (nl >= 0 && (nl > 0 ? buf[nl - 1] : before) === CR) end--;
    this.setLineEnd(firstItem, end);
  }

  private clampContext(line: string): string {
    const maxChars = this.job.maxChars;
    return detached(line.length <= maxChars ? line : line.slice(0, codeUnitFloor(line, maxChars)));
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
    if (this.testFirst && !re.test(line)) return;
    re.reset(line);
    let ordinal = 0;
    let cpIndex = 0;
    let cpCount = 0;
    for (let from = 0; from <= line.length && re.find(from); ) {
      const idx = re.start;
      const mlen = re.end - idx;
      from = mlen > 0 ? re.end : re.end + (isPairAt(line, idx) ? 2 : 1);
      if (this.wanted(byteStart, ordinal++)) {
        cpCount += codePoints(line, cpIndex, idx);
        cpIndex = idx;
        this.collect(line, idx, mlen, cpCount + 1, byteStart, byteEnd, lineNumber, ordinal - 1);
      }
      if (this.done()) break;
    }
  }

  /**
   * Collects the match at `idx` of `line` (or of a long line's window, `complete` false: the text
   * does not reach the line's end, and `byteEnd` is set once it is known).
   */
  private collect(
    line: string,
    idx: number,
    mlen: number,
    column: number,
    byteStart: number,
    byteEnd: number,
    lineNumber: number,
    ordinal: number,
    complete = true,
  ): void {
    const ring = this.ring;
    const maxChars = this.job.maxChars;
    const match: RawMatch = {
      path: this.relPath,
      line: lineNumber,
      column,
      text: line.length > maxChars || !complete ? "" : detached(line),
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
    if (line.length > maxChars || !complete) {
      const centred = idx - ((maxChars - mlen) >> 1);
      let start =
        mlen >= maxChars
          ? idx
          : Math.max(0, complete ? Math.min(centred, line.length - maxChars) : centred);
      if (start > 0 && isLowAt(line, start) && isHighAt(line, start - 1)) start--;
      const end = start + codeUnitFloor(line.slice(start, start + maxChars + 1), maxChars);
      match.text = detached(line.slice(start, end));
      match.truncated = true;
      match.textColumn = column - codePoints(line, start, idx);
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

/** Bytes a long line's window keeps before where its search resumes (a clamped item's lead). */
function contextBytesFor(maxChars: number): number {
  return 4 * (maxChars + 2);
}

/**
 * What a long line's window holds besides new text: the kept context, and the units a match
 * needs after its start (its reach, or the clamped item's text). Streaming needs it to be small
 * beside the buffer, so that each window makes progress.
 */
function streamMargin(reachUnits: number, maxChars: number): number {
  return contextBytesFor(maxChars) + 4 * Math.max(reachUnits, maxChars + 1);
}

/**
 * A copy of `s` that keeps no larger string alive: V8's slices share their parent's storage, and a
 * collected item must not hold its chunk, or a long line's window, until the page is sent.
 */
function detached(s: string): string {
  return s.length < 16 ? s : Buffer.from(s, "utf16le").toString("utf16le");
}

/** The end of a block of whole lines starting at `from` (about BLOCK_BYTES). */
function blockEndAt(region: Buffer, from: number): number {
  if (from + BLOCK_BYTES >= region.length) return region.length;
  const nl = region.indexOf(NEWLINE, from + BLOCK_BYTES);
  return nl < 0 ? region.length : nl + 1;
}

/** The index of the terminator of the line starting at `from` (`to` when it has none before). */
function lineEndAt(region: Buffer, from: number, to: number): number {
  const nl = region.indexOf(NEWLINE, from);
  return nl < 0 || nl >= to ? to : nl;
}

/** The end of a line's content: its terminator without a `\r` before it. */
function contentEndAt(region: Buffer, from: number, terminator: number): number {
  return terminator < region.length && terminator > from && region[terminator - 1] === CR
    ? terminator - 1
    : terminator;
}

/** Matches of every line of `region[from..]`, counted on the raw bytes by the linear engine. */
function countLinearLines(bytes: ByteMatcher, region: Buffer, from: number): number {
  let n = 0;
  for (let b = from; b < region.length; ) {
    const blockEnd = blockEndAt(region, b);
    if (bytes.mayMatch(region.subarray(b, blockEnd))) {
      for (let ls = b; ls < blockEnd; ) {
        const le = lineEndAt(region, ls, blockEnd);
        n += bytes.count(region.subarray(ls, contentEndAt(region, ls, le)));
        ls = le + 1;
      }
    }
    b = blockEnd;
  }
  return n;
}

/** UTF-16 units of the valid UTF-8 `bytes[from, to)`. */
function utf16Units(bytes: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    if ((b & 0xc0) !== 0x80) n += b >= 0xf0 ? 2 : 1;
  }
  return n;
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
