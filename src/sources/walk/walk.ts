/**
 * @module
 * The directory walker shared by `list` and `search`: a depth-first walk that emits entries in
 * code-point order of their relative paths, honours hidden files and nested `.gitignore` files
 * like git, never follows symbolic links, and holds only the pending entries of the directories on
 * the current path (memory O(depth × width), not O(tree)); all of them together never more than
 * `maxEntries`, which a directory wider than that is refused at, one entry past it.
 *
 * Ordering: in one directory, an entry `x` sorts at key `x` and, when it is a directory walked
 * recursively, its subtree sorts at key `x/`. Every path in the subtree starts with `x/` and no
 * sibling key does, so walking the keys of each directory in code-point order and descending at
 * the `x/` keys yields every path in code-point order overall (`a`, `a-b`, `a/c` — `-` < `/`).
 *
 * Confinement: a directory is opened `O_DIRECTORY|O_NOFOLLOW`, the descriptor's real path
 * (`/proc/self/fd/N`) must lie inside the walked directory, and the entries are read through the
 * descriptor, so a directory swapped for a symlink to elsewhere during the walk is never listed.
 * The descriptor stays open while its entries are visited, and they are stat'ed and their
 * `.gitignore` opened through it. Per directory this adds an open, a readlink and a close to the
 * readdir; nothing per file.
 *
 * Filtering: rules never hide the walked directory itself (like rg and fd); each entry is tested
 * alone against the `.gitignore` rules in force, and the walk counts what rules removed.
 */
import * as nodeFs from "node:fs";
import path from "node:path";
import { PagewiseError } from "../../core/index.js";
import {
  MAX_GITIGNORE_BYTES,
  MAX_GITIGNORE_RULE_CHARS,
  MAX_GITIGNORE_RULES,
  MAX_OPEN_WALK_DIRECTORIES,
} from "../limits.js";
import {
  compileGitignore,
  type GitignoreRules,
  type GitignoreSkip,
  isGitignoreSkip,
  readGitignore,
} from "./gitignore.js";
import { compareCodePoints } from "./order.js";

export type EntryType = "file" | "directory" | "symlink" | "other";

/** The file-system call the walker opens directories with; injectable for tests (EACCES as root). */
export interface WalkFs {
  openSync(path: string, flags: number): number;
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
  /** Largest `.gitignore` file read (default MAX_GITIGNORE_BYTES); a larger one is skipped. */
  readonly maxGitignoreBytes?: number;
  readonly signal?: AbortSignal;
  readonly fs?: WalkFs;
  /** Called with each directory (absolute path) just before it is read. */
  readonly onDirectory?: (abs: string) => void;
  /**
   * Called with each directory read (relative, "" for the walked one) and the fstat of its opened
   * descriptor (taken anyway: its size says how to read the directory), before its entries are
   * visited.
   */
  readonly onDirectoryRead?: (rel: string, stats: nodeFs.Stats) => void;
  /**
   * Start right after this path (relative, `/`-separated): only entries that sort after it are
   * visited, and only the directories on its path and after it are read (key-set continuation).
   */
  readonly after?: string;
  /** Called now and then with the number of directory entries read so far. */
  readonly onProgress?: (entriesRead: number) => void;
  /**
   * Called with each `.gitignore` file whose rules are not applied (absolute path) and why, as it
   * is met: also for a walk that ends by an exception (a search that stops once its page is full).
   */
  readonly onGitignoreSkipped?: (absolute: string, skip: GitignoreSkip) => void;
}

export interface WalkEntry {
  /** Relative to the walked directory, `/`-separated. */
  readonly path: string;
  readonly absolute: string;
  /**
   * The entry named through its directory's opened descriptor (`/proc/self/fd/N/name`) where
   * possible, else `absolute`: lstat this, not `absolute`, to stat the entry that was listed even
   * if a directory on its path is swapped for a symlink meanwhile. Valid during `visit` only.
   */
  readonly statPath: string;
  readonly type: EntryType;
}

export interface WalkStats {
  /** Directory entries read (every name returned by the directories walked). */
  entriesRead: number;
  /** Directories that could not be read (permission denied and the like); their content is left out. */
  unreadable: number;
  /** The first unreadable directory, relative to the walked one. */
  firstUnreadable?: string;
  /**
   * Entries left out by `.gitignore` rules (`respectGitignore: false` includes them). An ignored
   * directory counts once: its content is not read.
   */
  ignored: number;
  /** Entries left out as hidden (`includeHidden: true` includes them); `.git` is not counted. */
  hidden: number;
  /** `.gitignore` files whose rules were not applied (symlink, not regular, over a limit). */
  gitignoreSkipped: number;
  /** The first of them, relative to the walked directory, and why. */
  firstGitignoreSkipped?: { readonly path: string } & GitignoreSkip;
}

interface Matcher {
  readonly rules: GitignoreRules;
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
  /** Rules (and their characters) in force below this directory's own `.gitignore`. */
  readonly rulesInForce: number;
  readonly charsInForce: number;
  /** The directory's descriptor, kept open while its entries are visited, or -1. */
  fd: number;
  /** Where its entries are stat'ed: `/proc/self/fd/N/` while `fd` is open, else `abs/`. */
  statBase: string;
}

const YIELD_EVERY_MS = 12;
/** Entries filtered between checks of the time slice (rule tests can cost ≈ 0.5 ms each). */
const FILTER_CHECK_EVERY = 64;

const DIR_FLAGS =
  nodeFs.constants.O_RDONLY |
  nodeFs.constants.O_DIRECTORY |
  nodeFs.constants.O_NOFOLLOW |
  nodeFs.constants.O_NONBLOCK;

/**
 * Where `<dir>/N` names the directory that descriptor N refers to: `/proc/<pid>/fd` (one path
 * lookup fewer per use than `/proc/self/fd`, whose `self` is a symlink: ≈ 7 % of an lstat through
 * it), else `/proc/self/fd` (a /proc of another pid namespace), or undefined where neither works
 * (not Linux, /proc not mounted or not readable: directories are then read by path). Probed once
 * on `/`.
 */
const PROC_FD = process.platform === "linux" ? probeProcFd() : undefined;

function probeProcFd(): string | undefined {
  let fd: number;
  try {
    fd = nodeFs.openSync("/", DIR_FLAGS);
  } catch {
    return undefined;
  }
  try {
    for (const dir of [`/proc/${process.pid}/fd`, "/proc/self/fd"]) {
      try {
        if (nodeFs.readlinkSync(`${dir}/${fd}`) === "/") return dir;
      } catch {
        // try the next spelling
      }
    }
    return undefined;
  } finally {
    nodeFs.closeSync(fd);
  }
}

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

function isWithin(dir: string, real: string): boolean {
  return real === dir || real.startsWith(dir === "/" ? "/" : `${dir}/`);
}

/** A directory opened through confinement: its descriptor (closed by the caller). */
interface ConfinedDirectory {
  readonly fd: number;
  /** Where the directory's own files are opened: through the descriptor where possible. */
  readonly base: string;
}

/** A directory opened for reading: its descriptor, its fstat and its entries. */
interface OpenedDirectory extends ConfinedDirectory {
  readonly stats: nodeFs.Stats;
  readonly dirents: nodeFs.Dirent[];
}

/** What `openDirectory` returns for a directory with more entries than the walk may still read. */
const TOO_MANY_ENTRIES = "too many entries";

/**
 * Bytes a directory's size grows by per entry, at least: 12 on ext4, 8 or more on xfs, 20 on
 * tmpfs, twice the name on btrfs. A directory whose size allows no more entries than the walk may
 * still read is read whole; any other (or one whose size says nothing) in batches, given up at the
 * limit: readdir builds every entry at once, natively and then as objects (about 300 bytes each),
 * and a directory of ten million names must not land in memory to be refused.
 */
const MIN_DIRECTORY_BYTES_PER_ENTRY = 2;
/** Entries read per system call from a directory read in batches. */
const DIRECTORY_BATCH_ENTRIES = 1024;

function errnoCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? "EIO";
}

/**
 * Opens `abs` as a directory without following a symlink in its last component and checks that
 * the descriptor's real path satisfies `accept` (a swap of an intermediate component for a symlink
 * lands elsewhere and is refused). Returns an errno code on failure, "outside" when refused.
 * Without /proc, `base` is the path (the walk still never follows symlinks).
 */
function openConfined(
  fs: WalkFs,
  abs: string,
  accept: (real: string) => boolean,
): ConfinedDirectory | string {
  let fd: number;
  try {
    fd = fs.openSync(abs, DIR_FLAGS);
  } catch (err) {
    return errnoCode(err);
  }
  if (!PROC_FD) return { fd, base: abs };
  const base = `${PROC_FD}/${fd}`;
  let inside: boolean;
  try {
    inside = accept(nodeFs.readlinkSync(base));
  } catch (err) {
    nodeFs.closeSync(fd);
    return errnoCode(err);
  }
  if (inside) return { fd, base };
  nodeFs.closeSync(fd);
  return "outside";
}

/**
 * `openConfined`, then the entries of the directory the descriptor refers to (what is listed is
 * what was checked), at most `budget` of them: TOO_MANY_ENTRIES past it.
 */
function openDirectory(
  fs: WalkFs,
  abs: string,
  accept: (real: string) => boolean,
  budget: number,
): OpenedDirectory | string {
  const opened = openConfined(fs, abs, accept);
  if (typeof opened === "string") return opened;
  try {
    const stats = nodeFs.fstatSync(opened.fd);
    const dirents = readEntries(opened.base, stats, budget);
    if (dirents) return { fd: opened.fd, base: opened.base, stats, dirents };
    nodeFs.closeSync(opened.fd);
    return TOO_MANY_ENTRIES;
  } catch (err) {
    nodeFs.closeSync(opened.fd);
    return errnoCode(err);
  }
}

/** The entries of the directory at `base` (fstat `stats`), or undefined past `budget` of them. */
function readEntries(
  base: string,
  stats: nodeFs.Stats,
  budget: number,
): nodeFs.Dirent[] | undefined {
  if (stats.size > 0 && stats.size / MIN_DIRECTORY_BYTES_PER_ENTRY <= budget) {
    return nodeFs.readdirSync(base, { withFileTypes: true });
  }
  const dir = nodeFs.opendirSync(base, { bufferSize: DIRECTORY_BATCH_ENTRIES });
  const dirents: nodeFs.Dirent[] = [];
  try {
    for (let d = dir.readSync(); d !== null; d = dir.readSync()) {
      if (dirents.length === budget) return undefined;
      dirents.push(d);
    }
  } finally {
    dir.closeSync();
  }
  return dirents;
}

/**
 * Walks `dir`, calling `visit` for every entry that is neither hidden (unless included) nor ignored,
 * in code-point order of `path`; `visit` returning `false` ends the walk there (the stats then
 * count what was read). Unreadable directories are counted and skipped; entries that vanish during
 * the walk, and directories swapped for something outside `dir`, are skipped silently.
 */
export async function walk(
  dir: string,
  options: WalkOptions,
  visit: (entry: WalkEntry) => unknown,
): Promise<WalkStats> {
  const walker = new Walker(dir, options);
  try {
    if (options.respectGitignore && options.ancestors) {
      await walker.loadAncestors(options.ancestors);
    }
    await walker.run(visit);
  } finally {
    walker.closeAll();
  }
  return walker.stats;
}

/** One walk's state: the stack of open directories, the rules in force, the counts. */
class Walker {
  readonly stats: WalkStats = {
    entriesRead: 0,
    unreadable: 0,
    ignored: 0,
    hidden: 0,
    gitignoreSkipped: 0,
  };
  private readonly fs: WalkFs;
  private readonly matchers: Matcher[] = [];
  private rulesInForce = 0;
  private charsInForce = 0;
  private readonly stack: Frame[] = [];
  private openFds = 0;
  private sliceStart = performance.now();

  constructor(
    private readonly dir: string,
    private readonly options: WalkOptions,
  ) {
    this.fs = options.fs ?? nodeFs;
  }

  /** Gives other work a turn once the current time slice is used up. */
  private async pause(): Promise<void> {
    if (performance.now() - this.sliceStart <= YIELD_EVERY_MS) return;
    this.options.onProgress?.(this.stats.entriesRead);
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.options.signal?.throwIfAborted();
    this.sliceStart = performance.now();
  }

  /**
   * Loads the `.gitignore` of an opened directory (`abs`, read through `base`); `shown` names it
   * relative to the walked one.
   */
  private async loadRules(
    base: string,
    abs: string,
    shown: string,
  ): Promise<GitignoreRules | undefined> {
    const text = await readGitignore(
      `${base}/.gitignore`,
      this.options.maxGitignoreBytes ?? MAX_GITIGNORE_BYTES,
    );
    if (text === undefined) return undefined;
    const rules = isGitignoreSkip(text)
      ? text
      : await compileGitignore(
          text,
          {
            rules: MAX_GITIGNORE_RULES - this.rulesInForce,
            chars: MAX_GITIGNORE_RULE_CHARS - this.charsInForce,
          },
          () => this.pause(),
        );
    if (!isGitignoreSkip(rules)) return rules;
    this.stats.gitignoreSkipped++;
    this.stats.firstGitignoreSkipped ??= { path: shown, ...rules };
    this.options.onGitignoreSkipped?.(abs === "/" ? "/.gitignore" : `${abs}/.gitignore`, rules);
    return undefined;
  }

  private pushRules(rules: GitignoreRules, prefix: string, strip: number): void {
    this.matchers.push({ rules, prefix, strip });
    this.rulesInForce += rules.count;
    this.charsInForce += rules.chars;
  }

  /** The `.gitignore` files of the directories above the walked one, each opened confined. */
  async loadAncestors(ancestors: readonly string[]): Promise<void> {
    const { dir } = this;
    for (const ancestor of ancestors) {
      // Not read: its `.gitignore` is opened directly (a missing one is no rule).
      const opened = openConfined(this.fs, ancestor, (real) => real === ancestor);
      if (typeof opened === "string") continue;
      try {
        const shown = toSlashes(path.relative(dir, path.join(ancestor, ".gitignore")));
        const rules = await this.loadRules(opened.base, ancestor, shown);
        const rel = toSlashes(path.relative(ancestor, dir));
        if (rules) this.pushRules(rules, rel === "" ? "" : `${rel}/`, 0);
      } finally {
        nodeFs.closeSync(opened.fd);
      }
    }
  }

  private isIgnored(rel: string, isDir: boolean): boolean {
    const { matchers } = this;
    for (let k = matchers.length - 1; k >= 0; k--) {
      const m = matchers[k]!;
      const verdict = m.rules.test(
        m.prefix + (m.strip > 0 ? rel.slice(m.strip) : rel) + (isDir ? "/" : ""),
      );
      if (verdict !== 0) return verdict > 0;
    }
    return false;
  }

  /** Opens and filters one directory; its descriptor stays open in the frame while there is room. */
  private async open(abs: string, rel: string): Promise<Frame | undefined> {
    this.options.onDirectory?.(abs);
    const { maxEntries } = this.options;
    const budget = maxEntries - this.stats.entriesRead;
    const opened = openDirectory(this.fs, abs, (real) => isWithin(this.dir, real), budget);
    if (opened === TOO_MANY_ENTRIES) throw walkLimitExceeded(maxEntries, maxEntries + 1);
    if (typeof opened === "string") {
      // Gone, replaced by a non-directory or a symlink, or moved outside: skipped like a vanished entry.
      if (["ENOENT", "ENOTDIR", "ELOOP", "outside"].includes(opened)) return undefined;
      this.stats.unreadable++;
      this.stats.firstUnreadable ??= rel.slice(0, -1) || ".";
      return undefined;
    }
    let frame: Frame | undefined;
    try {
      this.options.onDirectoryRead?.(rel.slice(0, -1), opened.stats);
      frame = await this.filterEntries(opened, abs, rel);
    } finally {
      if (frame === undefined || !PROC_FD || this.openFds >= MAX_OPEN_WALK_DIRECTORIES) {
        nodeFs.closeSync(opened.fd);
      } else {
        this.openFds++;
        frame.fd = opened.fd;
        frame.statBase = `${opened.base}/`;
      }
    }
    return frame;
  }

  private async filterEntries(opened: OpenedDirectory, abs: string, rel: string): Promise<Frame> {
    const { dirents } = opened;
    const { stats, options } = this;
    const { includeHidden, respectGitignore, recursive, maxEntries } = options;
    stats.entriesRead += dirents.length;
    if (stats.entriesRead > maxEntries) throw walkLimitExceeded(maxEntries, stats.entriesRead);
    const matchersBelow = this.matchers.length;
    const rulesBelow = this.rulesInForce;
    const charsBelow = this.charsInForce;
    if (respectGitignore && dirents.some((d) => d.name === ".gitignore")) {
      const rules = await this.loadRules(opened.base, abs, `${rel}.gitignore`);
      if (rules) this.pushRules(rules, "", rel.length);
    }
    const testing = respectGitignore && this.matchers.length > 0;
    const events: Event[] = [];
    for (let i = 0; i < dirents.length; i++) {
      const d = dirents[i]!;
      const name = d.name;
      if (name === ".git") continue;
      if (!includeHidden && name.charCodeAt(0) === 0x2e) {
        stats.hidden++;
        continue;
      }
      const type = typeOf(d);
      const isDir = type === "directory";
      if (testing) {
        if (this.isIgnored(rel + name, isDir)) {
          stats.ignored++;
          continue;
        }
        // Perf: rule tests can dominate a large directory; keep the event loop answering.
        if (i % FILTER_CHECK_EVERY === FILTER_CHECK_EVERY - 1) await this.pause();
      }
      events.push({ key: name, name, type, expand: false });
      if (isDir && recursive) events.push({ key: `${name}/`, name, type, expand: true });
    }
    events.sort(compareEvents);
    const statBase = abs === "/" ? "/" : `${abs}/`;
    return {
      events,
      i: 0,
      rel,
      abs,
      matchers: matchersBelow,
      rulesInForce: rulesBelow,
      charsInForce: charsBelow,
      fd: -1,
      statBase,
    };
  }

  private closeFrame(frame: Frame): void {
    if (frame.fd < 0) return;
    nodeFs.closeSync(frame.fd);
    frame.fd = -1;
    this.openFds--;
  }

  closeAll(): void {
    for (const frame of this.stack) this.closeFrame(frame);
  }

  /**
   * Positions the walk right after `after`: in each directory on its path the keys before it are
   * skipped and the next directory on the path is opened, so the walk goes on with the first entry
   * after `after` having read only those directories. A directory on the path that is gone (or now
   * ignored, hidden or not a directory) ends the descent there: the walk goes on after its key.
   */
  private async seek(after: string): Promise<void> {
    const parts = after.split("/");
    for (let level = 0; level < parts.length; level++) {
      const frame = this.stack[this.stack.length - 1]!;
      const last = level === parts.length - 1;
      const name = parts[level]!;
      const key = last ? name : `${name}/`;
      let i = firstAtOrAfter(frame.events, key, frame.i);
      const at = frame.events[i];
      if (last || at === undefined || at.key !== key || !at.expand) {
        // The last part itself was returned already: continue after it (its subtree, `name/`, follows).
        if (last && at !== undefined && at.key === key) i++;
        frame.i = i;
        return;
      }
      frame.i = i + 1;
      const abs = frame.abs === "/" ? `/${name}` : `${frame.abs}/${name}`;
      const child = await this.open(abs, `${frame.rel}${name}/`);
      if (!child) return;
      this.stack.push(child);
    }
  }

  async run(visit: (entry: WalkEntry) => unknown): Promise<void> {
    const { stack } = this;
    const first = await this.open(this.dir, "");
    if (first) stack.push(first);
    if (first && this.options.after !== undefined) await this.seek(this.options.after);
    let dirsSinceCheck = 0;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      if (frame.i >= frame.events.length) {
        stack.pop();
        this.closeFrame(frame);
        this.matchers.length = frame.matchers;
        this.rulesInForce = frame.rulesInForce;
        this.charsInForce = frame.charsInForce;
        continue;
      }
      const ev = frame.events[frame.i++]!;
      const rel = frame.rel + ev.name;
      const abs = frame.abs === "/" ? `/${ev.name}` : `${frame.abs}/${ev.name}`;
      if (!ev.expand) {
        const entry = {
          path: rel,
          absolute: abs,
          statPath: frame.statBase + ev.name,
          type: ev.type,
        };
        if (visit(entry) === false) return;
        continue;
      }
      // Perf: cancellation, progress and yielding are checked per directory, not per entry.
      if (++dirsSinceCheck >= 16) {
        dirsSinceCheck = 0;
        this.options.signal?.throwIfAborted();
        await this.pause();
      }
      const child = await this.open(abs, `${rel}/`);
      if (child) stack.push(child);
    }
  }
}

/** Index of the first event whose key sorts at or after `key` (events are sorted by key). */
function firstAtOrAfter(events: readonly Event[], key: string, from: number): number {
  let lo = from;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareCodePoints(events[mid]!.key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function toSlashes(p: string): string {
  return p.split(path.sep).join("/");
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
