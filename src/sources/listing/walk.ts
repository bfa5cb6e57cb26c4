/**
 * @module
 * The directory walker shared by `list` and `search`: a depth-first walk that emits entries in
 * code-point order of their relative paths, honours hidden files and nested `.gitignore` files
 * like git, never follows symbolic links, and holds only the pending entries of the directories on
 * the current path (memory O(depth × width), not O(tree)).
 *
 * Ordering: in one directory, an entry `x` sorts at key `x` and, when it is a directory walked
 * recursively, its subtree sorts at key `x/`. Every path in the subtree starts with `x/` and no
 * sibling key does, so walking the keys of each directory in code-point order and descending at
 * the `x/` keys yields every path in code-point order overall (`a`, `a-b`, `a/c` — `-` < `/`).
 */
import * as nodeFs from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { PagewiseError } from "../../core/index.js";
import { compareCodePoints } from "./order.js";

export type EntryType = "file" | "directory" | "symlink" | "other";

/** The file-system calls the walker makes; injectable for tests (unreadable directories as root). */
export interface WalkFs {
  readdirSync(dir: string, options: { withFileTypes: true }): nodeFs.Dirent[];
  readFileSync(file: string, encoding: "utf8"): string;
}

export interface WalkOptions {
  /** Descend into subdirectories (default: only the directory's own entries). */
  readonly recursive: boolean;
  /** Include names starting with "." (and walk hidden directories). `.git` is always skipped. */
  readonly includeHidden: boolean;
  /** Skip what `.gitignore` files ignore, nested ones included, like git. */
  readonly respectGitignore: boolean;
  /** Directory entries read before the walk fails with RESOURCE_LIMIT_EXCEEDED. */
  readonly maxEntries: number;
  /**
   * Directories above the walked one (absolute, outermost first) whose `.gitignore` files also
   * apply; normally every directory from the root down to the walked directory's parent.
   */
  readonly ancestors?: readonly string[];
  readonly signal?: AbortSignal;
  readonly fs?: WalkFs;
  /** Called with each directory (absolute path) just before it is read. */
  readonly onDirectory?: (abs: string) => void;
  /** Called now and then with the number of directory entries read so far. */
  readonly onProgress?: (entriesRead: number) => void;
}

export interface WalkEntry {
  /** Relative to the walked directory, `/`-separated. */
  readonly path: string;
  readonly absolute: string;
  readonly type: EntryType;
}

export interface WalkStats {
  /** Directory entries read (every name returned by the directories walked). */
  entriesRead: number;
  /** Directories that could not be read (permission denied and the like); their content is left out. */
  unreadable: number;
  /** The first unreadable directory, relative to the walked one. */
  firstUnreadable?: string;
}

interface Matcher {
  readonly ig: Ignore;
  /** Prepended to the entry's path after stripping `strip` characters. */
  readonly prefix: string;
  readonly strip: number;
}

interface Event {
  readonly key: string;
  readonly name: string;
  readonly type: EntryType;
  /** Descend into this directory (the `name/` key). */
  readonly expand: boolean;
}

interface Frame {
  readonly events: Event[];
  i: number;
  /** Relative path of this directory plus "/" ("" for the walked directory). */
  readonly rel: string;
  readonly abs: string;
  /** Length of the matcher stack below this directory's own `.gitignore`. */
  readonly matchers: number;
}

const YIELD_EVERY_MS = 12;

function typeOf(d: nodeFs.Dirent): EntryType {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "directory";
  if (d.isSymbolicLink()) return "symlink";
  return "other";
}

function compareEvents(a: Event, b: Event): number {
  return compareCodePoints(a.key, b.key);
}

export function walkLimitExceeded(limit: number, value: number): PagewiseError {
  return new PagewiseError(
    "RESOURCE_LIMIT_EXCEEDED",
    `The walk read more than ${limit} directory entries, the server's limit. List a subdirectory, or list without recursive.`,
    { limit: { name: "max_walk_entries", limit, value } },
  );
}

/**
 * Walks `dir`, calling `visit` for every entry that is neither hidden (unless included) nor ignored,
 * in code-point order of `path`. Unreadable directories are counted and skipped; entries that vanish
 * during the walk are skipped silently.
 */
export async function walk(
  dir: string,
  options: WalkOptions,
  visit: (entry: WalkEntry) => void,
): Promise<WalkStats> {
  const fs = options.fs ?? nodeFs;
  const { recursive, includeHidden, respectGitignore, maxEntries, signal } = options;
  const stats: WalkStats = { entriesRead: 0, unreadable: 0 };
  const matchers: Matcher[] = [];
  if (respectGitignore && options.ancestors) {
    for (const ancestor of options.ancestors) {
      const ig = loadGitignore(fs, ancestor);
      if (ig) {
        const rel = path.relative(ancestor, dir).split(path.sep).join("/");
        matchers.push({ ig, prefix: rel === "" ? "" : `${rel}/`, strip: 0 });
      }
    }
  }
  const isIgnored = (rel: string, isDir: boolean): boolean => {
    for (let k = matchers.length - 1; k >= 0; k--) {
      const m = matchers[k]!;
      const p = m.prefix + (m.strip > 0 ? rel.slice(m.strip) : rel) + (isDir ? "/" : "");
      const verdict = m.ig.test(p);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  };

  const open = (abs: string, rel: string): Frame | undefined => {
    let dirents: nodeFs.Dirent[];
    options.onDirectory?.(abs);
    try {
      dirents = fs.readdirSync(abs, { withFileTypes: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      stats.unreadable++;
      if (stats.firstUnreadable === undefined) stats.firstUnreadable = rel.slice(0, -1) || ".";
      return undefined;
    }
    stats.entriesRead += dirents.length;
    if (stats.entriesRead > maxEntries) throw walkLimitExceeded(maxEntries, stats.entriesRead);
    const base = matchers.length;
    if (respectGitignore) {
      for (let i = 0; i < dirents.length; i++) {
        if (dirents[i]!.name === ".gitignore") {
          const ig = loadGitignore(fs, abs);
          if (ig) matchers.push({ ig, prefix: "", strip: rel.length });
          break;
        }
      }
    }
    const events: Event[] = [];
    for (let i = 0; i < dirents.length; i++) {
      const d = dirents[i]!;
      const name = d.name;
      if (name === ".git") continue;
      if (!includeHidden && name.charCodeAt(0) === 0x2e) continue;
      const type = typeOf(d);
      const isDir = type === "directory";
      if (respectGitignore && matchers.length > 0 && isIgnored(rel + name, isDir)) continue;
      events.push({ key: name, name, type, expand: false });
      if (isDir && recursive) events.push({ key: `${name}/`, name, type, expand: true });
    }
    events.sort(compareEvents);
    return { events, i: 0, rel, abs, matchers: base };
  };

  const stack: Frame[] = [];
  const first = open(dir, "");
  if (first) stack.push(first);
  let sliceStart = performance.now();
  let dirsSinceCheck = 0;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.i >= frame.events.length) {
      stack.pop();
      matchers.length = frame.matchers;
      continue;
    }
    const ev = frame.events[frame.i++]!;
    const rel = frame.rel + ev.name;
    const abs = frame.abs === "/" ? `/${ev.name}` : `${frame.abs}/${ev.name}`;
    if (!ev.expand) {
      visit({ path: rel, absolute: abs, type: ev.type });
      continue;
    }
    // Perf: cancellation, progress and yielding are checked per directory, not per entry.
    if (++dirsSinceCheck >= 16) {
      dirsSinceCheck = 0;
      signal?.throwIfAborted();
      if (performance.now() - sliceStart > YIELD_EVERY_MS) {
        options.onProgress?.(stats.entriesRead);
        await new Promise<void>((resolve) => setImmediate(resolve));
        signal?.throwIfAborted();
        sliceStart = performance.now();
      }
    }
    const child = open(abs, `${rel}/`);
    if (child) stack.push(child);
  }
  return stats;
}

function loadGitignore(fs: WalkFs, dirAbs: string): Ignore | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dirAbs, ".gitignore"), "utf8");
  } catch {
    return undefined;
  }
  return ignore({ allowRelativePaths: true }).add(text);
}

/** The directories from `rootDir` down to the parent of `dir` (both canonical), outermost first. */
export function ancestorsWithin(rootDir: string, dir: string): string[] {
  const out: string[] = [];
  let current = dir;
  while (current !== rootDir) {
    const parent = path.dirname(current);
    if (parent === current) break;
    out.unshift(parent);
    current = parent;
    if (current === rootDir) break;
  }
  return out;
}
