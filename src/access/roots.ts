/**
 * @module
 * Roots and path confinement.
 *
 * A path argument is resolved lexically against the roots first (relative to the first root,
 * absolute inside a root, or a `file://` URI). The decisive check is made on what is actually
 * opened: after `open`, the real path of the descriptor (`/proc/self/fd/N` on Linux) must lie inside
 * a root, so a symlink swapped in between a check and the open cannot escape. Errors never list the
 * roots.
 */
import { constants, realpathSync } from "node:fs";
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PagewiseError } from "../core/index.js";

export class Roots {
  /** Canonical (real) root directories. */
  readonly dirs: readonly string[];

  /** Roots that contain nothing: every path and every cursor is ACCESS_DENIED. */
  static none(): Roots {
    return new Roots([], { allowEmpty: true });
  }

  constructor(dirs: readonly string[], options: { allowEmpty?: boolean } = {}) {
    if (dirs.length === 0 && !options.allowEmpty) {
      throw new PagewiseError("INVALID_ARGUMENT", "At least one root is required.");
    }
    this.dirs = dirs.map((d) => {
      try {
        return realpathSync(d);
      } catch {
        throw new PagewiseError("NOT_FOUND", `Root directory does not exist: ${d}`);
      }
    });
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

  /** Lexical resolution of a `path` argument; throws ACCESS_DENIED when it lies outside every root. */
  resolve(pathArg: string | undefined): string {
    const raw = pathArg ?? "";
    if (this.dirs.length === 0) {
      throw new PagewiseError("ACCESS_DENIED", "This caller may not read any directory.", {
        hint: "Ask the server's administrator to grant a root.",
      });
    }
    if (raw.includes("\0")) {
      throw new PagewiseError("ACCESS_DENIED", "The path contains a NUL byte.");
    }
    let candidate = raw;
    if (raw.startsWith("file:")) {
      try {
        candidate = fileURLToPath(raw);
      } catch {
        throw new PagewiseError("INVALID_ARGUMENT", "The path is not a valid file:// URI.");
      }
      if (candidate.includes("\0"))
        throw new PagewiseError("ACCESS_DENIED", "The path contains a NUL byte.");
    }
    const resolved = path.isAbsolute(candidate)
      ? path.resolve(candidate)
      : path.resolve(this.dirs[0]!, candidate);
    if (this.rootIndexOf(resolved) < 0) throw outside(raw);
    return resolved;
  }
}

export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(prefix);
}

function outside(pathArg: string): PagewiseError {
  return new PagewiseError(
    "ACCESS_DENIED",
    `Access denied: "${pathArg}" is outside the directories this server may read.`,
    {
      hint: "Use a path relative to the server's root, or an absolute path inside it.",
    },
  );
}

function fsError(err: unknown, pathArg: string): PagewiseError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return new PagewiseError("NOT_FOUND", `No such file or directory: "${pathArg}".`, {
        hint: "Check the path with the list tool.",
      });
    case "EACCES":
    case "EPERM":
      return new PagewiseError("ACCESS_DENIED", `Permission denied: "${pathArg}".`);
    case "ELOOP":
      return new PagewiseError(
        "ACCESS_DENIED",
        `Too many levels of symbolic links, or a link where none may be: "${pathArg}".`,
      );
    case "ENAMETOOLONG":
      return new PagewiseError("INVALID_ARGUMENT", "The path is too long.");
    default:
      return new PagewiseError(
        "INTERNAL_ERROR",
        `Could not open "${pathArg}" (${code ?? "unknown error"}).`,
      );
  }
}

/** The canonical path of an open descriptor, read from the kernel where possible. */
async function descriptorPath(fh: FileHandle, fallback: string): Promise<string> {
  if (process.platform === "linux") {
    try {
      return await readlink(`/proc/self/fd/${fh.fd}`);
    } catch {
      // /proc not mounted: fall through.
    }
  }
  return realpath(fallback);
}

export interface OpenedFile {
  readonly handle: FileHandle;
  /** Canonical path of what was opened. */
  readonly realPath: string;
  readonly rootIndex: number;
}

/**
 * Opens a regular file for reading, confined to the roots. FIFOs, sockets and devices are refused
 * with NOT_A_FILE before they are opened, and again (race-free) after: the open is non-blocking,
 * so a FIFO swapped in never blocks the server.
 */
export async function openFileConfined(
  roots: Roots,
  pathArg: string | undefined,
): Promise<OpenedFile> {
  const shown = pathArg ?? "";
  const lexical = roots.resolve(pathArg);
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    throw fsError(err, shown);
  }
  if (roots.rootIndexOf(real) < 0) throw outside(shown);
  let pre: Awaited<ReturnType<typeof stat>>;
  try {
    pre = await stat(real);
  } catch (err) {
    throw fsError(err, shown);
  }
  if (pre.isDirectory()) {
    throw new PagewiseError("NOT_A_FILE", `"${shown}" is a directory, not a file.`, {
      hint: "Use the list tool for directories.",
    });
  }
  if (!pre.isFile()) throw notRegular(shown);
  let handle: FileHandle;
  try {
    handle = await open(
      real,
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW,
    );
  } catch (err) {
    throw fsError(err, shown);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw notRegular(shown);
    const opened = await descriptorPath(handle, real);
    const rootIndex = roots.rootIndexOf(opened);
    if (rootIndex < 0) throw outside(shown);
    return { handle, realPath: opened, rootIndex };
  } catch (err) {
    await handle.close();
    throw err instanceof PagewiseError ? err : fsError(err, shown);
  }
}

function notRegular(shown: string): PagewiseError {
  return new PagewiseError(
    "NOT_A_FILE",
    `"${shown}" is not a regular file (a FIFO, socket or device).`,
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
    throw fsError(err, shown);
  }
  const rootIndex = roots.rootIndexOf(real);
  if (rootIndex < 0) throw outside(shown);
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(real);
  } catch (err) {
    throw fsError(err, shown);
  }
  if (!st.isDirectory()) {
    throw new PagewiseError("NOT_A_DIRECTORY", `"${shown}" is not a directory.`, {
      hint: "Use the read tool for files.",
    });
  }
  return { realPath: real, rootIndex };
}
