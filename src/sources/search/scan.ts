/**
 * @module
 * The search scan: walks a directory (same order and filters as `list`), reads each candidate file
 * in fixed-size chunks, skips binary files, and matches line by line. Protocol-free and
 * synchronous per file so that it runs unchanged in a worker thread (see pool.ts), where a
 * pathological regex can be stopped by terminating the thread.
 *
 * What a scan returns is bounded: the requested window of matches (at most `limit`, each line
 * clamped to `maxChars` around its match), the exact total, and a stamp of the candidate files'
 * identities. Memory: one chunk plus the longest line (≤ MAX_SEARCH_LINE_BYTES) at a time.
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
} from "node:fs";
import { identityKey, PagewiseError } from "../../core/index.js";
import { compileGlob } from "../listing/glob.js";
import { compareCodePoints } from "../listing/order.js";
import { walk } from "../listing/walk.js";
import { type CompiledPattern, chunkMatcher, lineMatcher } from "../pattern/index.js";

/** Bytes read per system call. */
export const SEARCH_CHUNK_BYTES = 1 << 20;
/** A file with a longer line is skipped (counted in `skipped.long_lines`): one line is held whole. */
export const MAX_SEARCH_LINE_BYTES = 64 << 20;
/** NUL in this many leading bytes marks a file binary (like git and ripgrep). */
export const BINARY_SNIFF_BYTES = 8192;

const NEWLINE = 0x0a;
const CR = 0x0d;
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

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

/** Bytes of a file's identity hash kept in a search cursor. */
export const FILE_TAG_BYTES = 6;

/** A short hash of (device, inode, size, mtime ns, ctime ns): a same-size rewrite changes ctime. */
export function identityTag(st: BigIntStats): string {
  return createHash("sha256")
    .update(identityKey(st))
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
      /** From the previous page: valid while the candidate files' stamp is unchanged. */
      readonly expect?: { readonly stamp: string; readonly total: number; readonly offset: number };
      /** Where to start reading the cursor's file: a line start at or before `after.lineStart`. */
      readonly resume?: { readonly byte: number; readonly line: number };
    };

export interface ScanJob {
  readonly dir: string;
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
  /**
   * A page never holds items whose text adds up to more than this many characters (the budget
   * times the estimator's units-per-token bound); a resumed scan stops collecting there instead
   * of at `limit`, so a small budget with a large limit does not read the rest of the tree.
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
}

export interface ScanSkipped {
  binary: number;
  long_lines: number;
  unreadable_files: number;
  unreadable_directories: number;
}

export interface ScanResult {
  total: number;
  /** Index of `items[0]` among all matches. */
  offset: number;
  items: RawMatch[];
  stamp: string;
  /** Present when every candidate file was read in this scan. */
  skipped?: ScanSkipped;
  filesRead: number;
  bytesRead: number;
}

export interface ScanHooks {
  /** Called per chunk and per file; may throw to stop the scan. */
  tick?(filesRead: number, bytesRead: number): void;
  signal?: AbortSignal;
}

interface Pending {
  readonly match: RawMatch;
}

/** Runs one scan. Resumed scans fall back to a full scan when the stamp shows the tree changed. */
export async function runScan(job: ScanJob, hooks: ScanHooks = {}): Promise<ScanResult> {
  const w = job.window;
  if (w.kind === "after" && w.expect) {
    const quick = await scanOnce(job, hooks, true);
    if (quick.stamp === w.expect.stamp) {
      return { ...quick, total: w.expect.total, offset: w.expect.offset };
    }
  }
  return scanOnce(job, hooks, false);
}

async function scanOnce(job: ScanJob, hooks: ScanHooks, resume: boolean): Promise<ScanResult> {
  const re = lineMatcher(job.pattern);
  const pre = job.pattern.prefilter && job.context === 0 ? chunkMatcher(job.pattern) : null;
  const glob = compileGlob(job.glob);
  const window = job.window;
  const after = window.kind === "after" ? window.after : undefined;
  const limit = window.limit;
  const context = job.context;
  const maxChars = job.maxChars;
  const stamp = createHash("sha256");
  const skipped: ScanSkipped = {
    binary: 0,
    long_lines: 0,
    unreadable_files: 0,
    unreadable_directories: 0,
  };
  const items: RawMatch[] = [];
  let total = 0;
  let before = 0;
  let filesRead = 0;
  let bytesRead = 0;
  let buf = Buffer.allocUnsafe(SEARCH_CHUNK_BYTES * 2);

  const maxPageChars = job.maxPageChars ?? Number.POSITIVE_INFINITY;
  /** Characters of the collected items' paths, texts and leading context: a lower bound of their page. */
  let itemChars = 0;
  /** Resumed scans stop reading once the page is full (the rest only needs stat for the stamp). */
  const full = (): boolean => resume && (items.length >= limit || itemChars >= maxPageChars);

  const offsetStart = window.kind === "offset" ? window.offset : 0;
  /** Scans one open file; false when it turned out binary or too long (its matches are dropped). */
  const scanFile = (relPath: string, fd: number, st: BigIntStats): boolean => {
    const ident = identityKey(st);
    const fileTag = identityTag(st);
    const cmp = after ? compareCodePoints(relPath, after.path) : 1;
    if (cmp === 0 && after?.fileTag !== undefined && fileTag !== after.fileTag) {
      throw new PagewiseError(
        "CONTENT_CHANGED",
        `${relPath} changed since the previous page, which ended inside it. Search again without the cursor.`,
        { hint: "Call again with the same arguments but no cursor." },
      );
    }
    let fileCount = 0;
    const itemsAtStart = items.length;
    let pending: Pending[] = [];
    const ring: { text: string; clamped: boolean; byte: number; line: number }[] = [];
    let position = 0;
    let lineNo = 1;
    if (resume && cmp === 0 && window.kind === "after" && window.resume) {
      position = window.resume.byte;
      lineNo = window.resume.line;
    }
    let len = 0;
    let first = true;
    let eof = false;
    let status: "ok" | "binary" | "long" = "ok";

    const clampContext = (line: string): string => {
      if (line.length <= maxChars) return line;
      return line.slice(0, codeUnitFloor(line, maxChars));
    };

    const processLine = (line: string, byteStart: number, byteEnd: number, lineNumber: number) => {
      re.lastIndex = 0;
      let ordinal = 0;
      let cpIndex = 0;
      let cpCount = 0;
      let m: RegExpExecArray | null;
      // biome-ignore lint/suspicious/noAssignInExpressions: the usual exec loop
      while ((m = re.exec(line)) !== null) {
        const idx = m.index;
        const mlen = m[0].length;
        if (mlen === 0) re.lastIndex = idx + (isPairAt(line, idx) ? 2 : 1);
        const ord = ordinal++;
        const index = total + fileCount++;
        let take: boolean;
        if (after) {
          const isAfter =
            cmp > 0 ||
            (cmp === 0 &&
              (byteStart > after.lineStart ||
                (byteStart === after.lineStart && ord > after.ordinal)));
          if (!isAfter) {
            before++;
            take = false;
          } else take = items.length < limit && itemChars < maxPageChars;
        } else take = index >= offsetStart && index < offsetStart + limit;
        if (take) {
          cpCount += codePoints(line, cpIndex, idx);
          cpIndex = idx;
          const match: RawMatch = {
            path: relPath,
            line: lineNumber,
            column: cpCount + 1,
            text: line,
            truncated: false,
            lineStart: byteStart,
            lineEnd: byteEnd,
            ordinal: ord,
            resumeByte: ring.length > 0 ? ring[0]!.byte : byteStart,
            resumeLine: ring.length > 0 ? ring[0]!.line : lineNumber,
            ident,
            fileTag,
          };
          if (line.length > maxChars) {
            let start: number;
            if (mlen >= maxChars) start = idx;
            else
              start = Math.max(0, Math.min(idx - ((maxChars - mlen) >> 1), line.length - maxChars));
            if (start > 0 && isLowAt(line, start) && isHighAt(line, start - 1)) start--;
            const end = start + codeUnitFloor(line.slice(start, start + maxChars + 1), maxChars);
            match.text = line.slice(start, end);
            match.truncated = true;
            match.textColumn = codePoints(line, 0, start) + 1;
          }
          if (context > 0) {
            match.before = ring.map((r) => r.text);
            match.after = [];
            if (ring.some((r) => r.clamped)) match.contextTruncated = true;
            pending.push({ match });
          }
          items.push(match);
          itemChars += match.path.length + match.text.length;
          for (const b of match.before ?? []) itemChars += b.length;
        }
        if (full() || re.lastIndex > line.length) break;
      }
    };

    const feedPending = (line: string) => {
      const clamped = clampContext(line);
      for (const p of pending) {
        p.match.after!.push(clamped);
        if (clamped.length < line.length) p.match.contextTruncated = true;
      }
      pending = pending.filter((p) => p.match.after!.length < context);
    };

    /** Processes `buf[0..end)`, whole lines (the last one unterminated only at EOF). */
    const processRegion = (end: number, base: number): boolean => {
      if (!isUtf8(buf.subarray(0, end))) return false;
      const text = buf.toString("utf8", 0, end);
      const region = buf.subarray(0, end);
      let s = 0;
      let b = 0;
      while (s < text.length) {
        if (pre !== null) {
          pre.lastIndex = s;
          const m = pre.exec(text);
          if (m === null) {
            while (s < text.length) {
              const nl = text.indexOf("\n", s);
              if (nl < 0) break;
              s = nl + 1;
              lineNo++;
            }
            return true;
          }
          const ls = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
          while (s < ls) {
            s = text.indexOf("\n", s) + 1;
            b = region.indexOf(NEWLINE, b) + 1;
            lineNo++;
          }
        }
        let e = text.indexOf("\n", s);
        let be = region.indexOf(NEWLINE, b);
        const terminated = e >= 0 && be >= 0;
        if (!terminated) {
          e = text.length;
          be = end;
        }
        let lineEndStr = e;
        let lineEndByte = be;
        if (terminated && e > s && text.charCodeAt(e - 1) === CR) {
          lineEndStr--;
          lineEndByte--;
        }
        const line = text.slice(s, lineEndStr);
        // Order: this line is after-context of earlier matches, then matched itself (its own
        // matches see the lines before it), then becomes before-context of later lines.
        if (pending.length > 0) feedPending(line);
        if (!full()) processLine(line, base + b, base + lineEndByte, lineNo);
        if (context > 0) {
          const clamped = clampContext(line);
          ring.push({
            text: clamped,
            clamped: clamped.length < line.length,
            byte: base + b,
            line: lineNo,
          });
          if (ring.length > context) ring.shift();
        }
        if (full() && pending.length === 0) return true;
        s = terminated ? e + 1 : text.length;
        b = terminated ? be + 1 : end;
        lineNo++;
      }
      return true;
    };

    while (!eof) {
      hooks.signal?.throwIfAborted();
      if (len === buf.length) {
        if (buf.length >= MAX_SEARCH_LINE_BYTES + SEARCH_CHUNK_BYTES) {
          status = "long";
          break;
        }
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const n = readSync(fd, buf, len, Math.min(SEARCH_CHUNK_BYTES, buf.length - len), position);
      bytesRead += n;
      hooks.tick?.(filesRead, bytesRead);
      if (first) {
        first = false;
        const sniff = buf.subarray(0, Math.min(n, BINARY_SNIFF_BYTES));
        if (position === 0 && sniff.includes(0)) {
          status = "binary";
          break;
        }
      }
      position += n;
      len += n;
      eof = n === 0;
      let end: number;
      if (eof) end = len;
      else {
        const lastNl = buf.lastIndexOf(NEWLINE, len - 1);
        if (lastNl < 0) {
          if (len > MAX_SEARCH_LINE_BYTES) {
            status = "long";
            break;
          }
          continue;
        }
        end = lastNl + 1;
      }
      if (end > 0 && !processRegion(end, position - len)) {
        status = "binary";
        break;
      }
      if (full() && pending.length === 0) break;
      buf.copy(buf, 0, end, len);
      len -= end;
      if (eof) break;
    }
    if (status !== "ok") {
      if (status === "binary") skipped.binary++;
      else skipped.long_lines++;
      items.length = itemsAtStart;
      return false;
    }
    total += fileCount;
    return true;
  };

  const walkStats = await walk(
    job.dir,
    {
      recursive: true,
      includeHidden: job.includeHidden,
      respectGitignore: job.respectGitignore,
      maxEntries: job.maxWalkEntries,
      ancestors: job.ancestors,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      onProgress: () => hooks.tick?.(filesRead, bytesRead),
    },
    (entry) => {
      if (entry.type !== "file") return;
      if (glob && !glob(entry.path)) return;
      if (full() && resume) {
        // Page full: the rest only contributes to the stamp.
        try {
          const st = lstatSync(entry.absolute, { bigint: true });
          if (st.isFile()) stamp.update(`${entry.path}\0${identityKey(st)}\n`);
        } catch {
          // vanished
        }
        return;
      }
      const cmp = after ? compareCodePoints(entry.path, after.path) : 1;
      if (resume && cmp < 0) {
        try {
          const st = lstatSync(entry.absolute, { bigint: true });
          if (st.isFile()) stamp.update(`${entry.path}\0${identityKey(st)}\n`);
        } catch {
          // vanished
        }
        return;
      }
      let fd: number;
      try {
        fd = openSync(entry.absolute, OPEN_FLAGS);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOENT") skipped.unreadable_files++;
        return;
      }
      try {
        const st = fstatSync(fd, { bigint: true });
        if (!st.isFile()) return;
        if (!confined(fd, job.dir)) return;
        stamp.update(`${entry.path}\0${identityKey(st)}\n`);
        filesRead++;
        const before0 = before;
        // A skipped (binary) file's matches before the cursor are not matches at all.
        if (!scanFile(entry.path, fd, st)) before = before0;
        hooks.tick?.(filesRead, bytesRead);
      } catch (err) {
        if (err instanceof PagewiseError || (err as Error).name === "AbortError") throw err;
        skipped.unreadable_files++;
      } finally {
        closeSync(fd);
      }
    },
  );
  skipped.unreadable_directories = walkStats.unreadable;
  const offset = after ? before : window.kind === "offset" ? window.offset : 0;
  return {
    total,
    offset,
    items,
    stamp: stamp.digest().subarray(0, 6).toString("base64url"),
    ...(resume ? {} : { skipped }),
    filesRead,
    bytesRead,
  };
}

/** On Linux, the opened file's real path must lie inside the searched directory. */
function confined(fd: number, dir: string): boolean {
  if (process.platform !== "linux") return true;
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return true; // no /proc: the walk never follows links, which is the main guard
  }
  return real.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
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
