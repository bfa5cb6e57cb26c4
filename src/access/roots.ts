/**
 * @module
 * Roots and path confinement.
 *
 * A path argument is resolved lexically against the roots first (relative to the first root,
 * absolute inside a root, or a `file://` URI; `..` is resolved lexically). A root may be named
 * through a symlink (`--root LINK`): absolute paths under either spelling, the one given or the
 * canonical one, resolve to the canonical root fixed when the roots were built. The decisive check
 * is made on what is actually opened: after `open`, the real path of the descriptor
 * (`/proc/self/fd/N` on Linux) must lie inside a root, so a symlink swapped in between a check and
 * the open cannot escape. An ACCESS_DENIED error names the caller's own roots, so an agent can
 * correct its path; nobody else's roots ever appear.
 */
import {
  type BigIntStats,
  constants,
  readlinkSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PagewiseError } from "../core/index.js";
import { type Descriptor, openDescriptor } from "./descriptor.js";

/** Roots named in one error message; more are counted, not listed. */
const ROOTS_NAMED_MAX = 10;
/** Characters of a caller's path echoed in an error message; a longer path is shortened. */
const PATH_SHOWN_MAX_CHARS = 240;

/**
 * A caller's path as shown in a message: JSON-quoted (control characters escaped), and shortened
 * in the middle when long, so a hostile path cannot make an error message huge.
 */
function quote(pathArg: string): string {
  const half = PATH_SHOWN_MAX_CHARS >> 1;
  const shown =
    pathArg.length > PATH_SHOWN_MAX_CHARS
      ? `${pathArg.slice(0, half)}…${pathArg.slice(-half)}`
      : pathArg;
  return JSON.stringify(shown);
}

/** A `path` argument after lexical resolution. */
interface ResolvedPath {
  /** Absolute, normalized, under a canonical root. */
  readonly lexical: string;
  /** The argument ends in `/` or `/.`: like the OS, it names a directory (ENOTDIR otherwise). */
  readonly directoryOnly: boolean;
}

export class Roots {
  /** Canonical (real) root directories. */
  readonly dirs: readonly string[];
  /** The absolute spellings the roots were given with, where they differ from `dirs`. */
  readonly #aliases: ReadonlyArray<{ readonly given: string; readonly index: number }>;

  /** Roots that contain nothing: every path and every cursor is ACCESS_DENIED. */
  static none(): Roots {
    return new Roots([], { allowEmpty: true });
  }

  /**
   * Canonicalizes each root. A root that does not exist is NOT_FOUND, one that is not a directory
   * (a regular file, a FIFO, a device) is NOT_A_DIRECTORY: refused here, when the roots are built,
   * rather than on every call. Synchronous, for start-up; roots built while serving are given
   * `resolved` (from `resolveRoot`), so no slow file system blocks the thread.
   */
  constructor(
    dirs: readonly string[],
    options: { allowEmpty?: boolean; resolved?: readonly string[] } = {},
  ) {
    if (dirs.length === 0 && !options.allowEmpty) {
      throw new PagewiseError("INVALID_ARGUMENT", "At least one root is required.");
    }
    const aliases: Array<{ given: string; index: number }> = [];
    this.dirs = dirs.map((d, index) => {
      const real = options.resolved?.[index] ?? resolveRootSync(d);
      const given = path.resolve(d);
      if (given !== real) aliases.push({ given, index });
      return real;
    });
    this.#aliases = aliases;
  }

  /** The index of the root containing the canonical path `real`, or -1. */
  rootIndexOf(real: string): number {
    for (let i = 0; i < this.dirs.length; i++) {
      if (isInside(this.dirs[i]!, real)) return i;
    }
    return -1;
  }

  /** The root-relative form of a canonical path inside root `index` (`/`-separated, "" for the root). */
  relative(index: number, real: string): string {
    return path.relative(this.dirs[index]!, real).split(path.sep).join("/");
  }

  /** The caller's roots in words, for error messages (bounded however many roots there are). */
  describe(): string {
    const named = this.dirs.slice(0, ROOTS_NAMED_MAX).map((d) => JSON.stringify(d));
    const more = this.dirs.length - named.length;
    return more > 0 ? `${named.join(", ")} and ${more} more` : named.join(", ");
  }

  /**
   * An ACCESS_DENIED error whose message and hint name the directories this caller may read (its
   * own roots only).
   */
  denied(message: string, details: { hint?: string } = {}): PagewiseError {
    if (this.dirs.length === 0) {
      return new PagewiseError(
        "ACCESS_DENIED",
        `${message} This caller may not read any directory.`,
        {
          hint: "Ask the server's administrator to grant a root.",
        },
      );
    }
    const list = this.describe();
    const hint =
      details.hint ??
      `Use a path relative to ${JSON.stringify(this.dirs[0])}, or an absolute path or file:// URI inside ${this.dirs.length === 1 ? "it" : `one of: ${list}`}.`;
    return new PagewiseError(
      "ACCESS_DENIED",
      `${message} This caller may read ${this.dirs.length === 1 ? "the directory" : "the directories"} ${list}.`,
      { hint },
    );
  }

  /** Lexical resolution of a `path` argument; throws ACCESS_DENIED when it lies outside every root. */
  resolve(pathArg: string | undefined): string {
    return this.resolvePath(pathArg).lexical;
  }

  /** `resolve`, also telling whether the argument can only name a directory (a trailing `/`). */
  resolvePath(pathArg: string | undefined): ResolvedPath {
    const raw = pathArg ?? "";
    if (this.dirs.length === 0) throw this.denied(`Access denied: ${quote(raw)}.`);
    if (raw.includes("\0")) throw this.denied("Access denied: the path contains a NUL byte.");
    const candidate = fromFileUri(raw);
    if (candidate.includes("\0")) throw this.denied("Access denied: the path contains a NUL byte.");
    const directoryOnly = /(^|\/)\.?$/.test(candidate) && candidate !== "";
    const resolved = path.isAbsolute(candidate)
      ? path.resolve(candidate)
      : path.resolve(this.dirs[0]!, candidate);
    if (this.rootIndexOf(resolved) >= 0) return { lexical: resolved, directoryOnly };
    // A root given through a symlink: its given spelling stands for the canonical root.
    for (const { given, index } of this.#aliases) {
      if (isInside(given, resolved)) {
        const rest = path.relative(given, resolved);
        return { lexical: path.join(this.dirs[index]!, rest), directoryOnly };
      }
    }
    throw this.outside(raw);
  }

  /** ACCESS_DENIED for a path outside every root. */
  outside(pathArg: string): PagewiseError {
    return this.denied(
      `Access denied: ${quote(pathArg)} is outside the directories this caller may read.`,
    );
  }
}

function rootNotFound(d: string): PagewiseError {
  return new PagewiseError("NOT_FOUND", `Root directory does not exist: ${d}`);
}

function rootNotDirectory(d: string): PagewiseError {
  return new PagewiseError("NOT_A_DIRECTORY", `Root is not a directory: ${d}`, {
    hint: "Give a directory as the root; to serve one file, give the directory holding it.",
  });
}

/** The canonical path of root directory `d`; NOT_FOUND or NOT_A_DIRECTORY. Blocks: start-up only. */
export function resolveRootSync(d: string): string {
  let real: string;
  try {
    real = realpathSync(d);
  } catch {
    throw rootNotFound(d);
  }
  if (!statSync(real).isDirectory()) throw rootNotDirectory(d);
  return real;
}

/** `resolveRootSync` without blocking the thread (roots built while serving). */
export async function resolveRoot(d: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(d);
  } catch {
    throw rootNotFound(d);
  }
  if (!(await stat(real)).isDirectory()) throw rootNotDirectory(d);
  return real;
}

/**
 * The filesystem path of a `file:` URI (the scheme in any case, as URI schemes are
 * case-insensitive); any other string unchanged. A query or fragment is refused rather than dropped,
 * so `file:///a?b` never silently reads `/a`.
 */
function fromFileUri(raw: string): string {
  if (!/^file:/i.test(raw)) return raw;
  let candidate: string;
  try {
    candidate = fileURLToPath(new URL(raw));
  } catch {
    throw new PagewiseError("INVALID_ARGUMENT", "The path is not a valid file:// URI.", {
      hint: "Use file:///absolute/path (percent-encode special characters), or a plain path.",
    });
  }
  if (/[?#]/.test(raw)) {
    throw new PagewiseError(
      "INVALID_ARGUMENT",
      "The file:// URI has a query (?) or fragment (#), which name no file.",
      { hint: "Percent-encode ? as %3F and # as %23 when they are part of the file name." },
    );
  }
  return candidate;
}

export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(prefix);
}

function fsError(err: unknown, pathArg: string, roots: Roots): PagewiseError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return new PagewiseError("NOT_FOUND", `No such file or directory: ${quote(pathArg)}.`, {
        hint: "Check the path with the list tool.",
      });
    case "EACCES":
    case "EPERM":
      return roots.denied(`Permission denied: ${quote(pathArg)}.`, {
        hint: "The operating system refuses this file to the server; choose another file.",
      });
    case "ELOOP":
      return roots.denied(
        `Access denied: too many levels of symbolic links, or a link where none may be: ${quote(pathArg)}.`,
      );
    case "ENAMETOOLONG":
      return new PagewiseError("INVALID_ARGUMENT", "The path is too long.");
    default:
      return new PagewiseError(
        "INTERNAL_ERROR",
        `Could not open ${quote(pathArg)} (${code ?? "unknown error"}).`,
      );
  }
}

/** Where this process can read an open descriptor's canonical path from the kernel. */
const DESCRIPTOR_PATHS = process.platform === "linux" ? "/proc/self/fd" : undefined;

/** The canonical path of an open descriptor: from the kernel where possible, else `realpath`. */
async function descriptorPath(fh: Descriptor, fallback: string): Promise<string> {
  if (DESCRIPTOR_PATHS) {
    try {
      // Perf: synchronous, as it never waits: /proc answers from the kernel's memory, whatever
      // file system the descriptor's file is on (a thread-pool round trip cost 5x as much CPU).
      return readlinkSync(`${DESCRIPTOR_PATHS}/${fh.fd}`);
    } catch {
      // /proc not mounted: fall through.
    }
  }
  return realpath(fallback);
}

export interface OpenedFile {
  /** The open file: its reads, its stat now and its close (see descriptor.ts). */
  readonly handle: Descriptor;
  /** Canonical path of what was opened. */
  readonly realPath: string;
  readonly rootIndex: number;
  /** The descriptor's stat, taken right after the open (callers need no second fstat). */
  readonly stat: BigIntStats;
}

/**
 * Opens a regular file for reading, confined to the roots. FIFOs, sockets and devices are refused
 * with NOT_A_FILE before they are opened, and again (race-free) after: the open is non-blocking,
 * so a FIFO swapped in never blocks the server.
 *
 * What confines is the canonical path of the opened descriptor, read back from the kernel after
 * the open (race-free: it is what was opened, whatever links the path went through). Perf: the
 * path is therefore resolved (`realpath`) before the open only where /proc is missing, when its
 * last component is a link (the open never follows one, so that no link swapped in at the last
 * moment leads to a device), and to word a refusal (missing, a directory, a device) so that
 * nothing is said of a file outside the roots: opening a plain path costs two thread-pool trips
 * (lstat, open) on a local file system, where the descriptor's fstat runs on this thread.
 */
export async function openFileConfined(
  roots: Roots,
  pathArg: string | undefined,
): Promise<OpenedFile> {
  const shown = pathArg ?? "";
  const { lexical, directoryOnly } = roots.resolvePath(pathArg);
  let target = lexical;
  let pre = await statOrRefuse(roots, lexical, shown, true);
  if (pre.isSymbolicLink() || !DESCRIPTOR_PATHS) {
    target = await confinedRealPath(roots, lexical, shown);
    pre = await statOrRefuse(roots, target, shown, false);
  }
  if (directoryOnly || !pre.isFile()) {
    if (target === lexical) await confinedRealPath(roots, lexical, shown);
    if (directoryOnly && !pre.isDirectory()) throw trailingSlashOnFile(shown);
    if (pre.isDirectory()) {
      throw new PagewiseError("NOT_A_FILE", `${quote(shown)} is a directory, not a file.`, {
        hint: "Use the list tool for directories.",
      });
    }
    throw notRegular(shown);
  }
  let handle: Descriptor;
  try {
    handle = await openDescriptor(
      target,
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW,
    );
  } catch (err) {
    throw fsError(err, shown, roots);
  }
  try {
    const [st, opened] = await Promise.all([handle.stat(), descriptorPath(handle, target)]);
    const rootIndex = roots.rootIndexOf(opened);
    if (rootIndex < 0) throw roots.outside(shown);
    if (!st.isFile()) throw notRegular(shown);
    return { handle, realPath: opened, rootIndex, stat: st };
  } catch (err) {
    await handle.close();
    throw err instanceof PagewiseError ? err : fsError(err, shown, roots);
  }
}

/**
 * `lstat` (`link`) or `stat` of a path; on failure, ACCESS_DENIED if the path leads outside the
 * roots, else the failure.
 */
async function statOrRefuse(
  roots: Roots,
  target: string,
  shown: string,
  link: boolean,
): Promise<Stats> {
  try {
    return await (link ? lstat(target) : stat(target));
  } catch (err) {
    await confinedRealPath(roots, target, shown);
    throw fsError(err, shown, roots);
  }
}

/**
 * The canonical path of `lexical`, which must be inside the roots (else ACCESS_DENIED); also run
 * before a refusal that would describe the file (missing, a directory, a device…), so that nothing
 * is said of a file outside the roots.
 */
async function confinedRealPath(roots: Roots, lexical: string, shown: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    throw fsError(err, shown, roots);
  }
  if (roots.rootIndexOf(real) < 0) throw roots.outside(shown);
  return real;
}

/** `a.txt/` names a directory; like the OS (ENOTDIR), it never reads the file `a.txt`. */
function trailingSlashOnFile(shown: string): PagewiseError {
  const withoutSlash = shown.replace(/\/\.?$/, "").replace(/\/+$/, "");
  return new PagewiseError(
    "NOT_A_DIRECTORY",
    `${quote(shown)} ends with "/", which names a directory, but ${quote(withoutSlash)} is not a directory.`,
    { hint: "Leave out the trailing slash to name the file.", retry: { path: withoutSlash } },
  );
}

function notRegular(shown: string): PagewiseError {
  return new PagewiseError(
    "NOT_A_FILE",
    `${quote(shown)} is not a regular file (a FIFO, socket or device).`,
    {
      hint: "Only regular files can be read.",
    },
  );
}

/**
 * Resolves a directory argument to its canonical path inside the roots (for listing and search).
 */
export async function resolveDirectoryConfined(
  roots: Roots,
  pathArg: string | undefined,
): Promise<{ realPath: string; rootIndex: number }> {
  const shown = pathArg ?? "";
  const lexical = roots.resolve(pathArg);
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    throw fsError(err, shown, roots);
  }
  const rootIndex = roots.rootIndexOf(real);
  if (rootIndex < 0) throw roots.outside(shown);
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(real);
  } catch (err) {
    throw fsError(err, shown, roots);
  }
  if (!st.isDirectory()) {
    throw new PagewiseError("NOT_A_DIRECTORY", `${quote(shown)} is not a directory.`, {
      hint: "Use the read tool for files.",
    });
  }
  return { realPath: real, rootIndex };
}
