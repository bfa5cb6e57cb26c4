/**
 * @module
 * Opening the walk's files so that what is opened provably lies inside the searched directory, at
 * one extra system call per directory instead of one per file.
 *
 * Each directory is opened once (`O_DIRECTORY|O_NOFOLLOW`) and its descriptor's real path is
 * checked (`/proc/self/fd/N`); its files are then opened as `/proc/self/fd/N/NAME` with
 * `O_NOFOLLOW`. The kernel resolves that magic link to the directory already opened (like
 * `openat(N, NAME)`), and a readdir name holds no `/`, so a file opened this way is inside that
 * directory whatever is renamed or swapped for a symlink meanwhile. Node has no `openat`, which is
 * why the descriptor path is used. Without `/proc` (not Linux), files are opened by path with
 * `O_NOFOLLOW` and the walk's never-follow rule is the guard, as before.
 */
import { closeSync, constants, existsSync, openSync, readlinkSync } from "node:fs";
import { MAX_OPEN_SEARCH_DIRECTORIES } from "../limits.js";

const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

const HAVE_PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

export class ConfinedOpener {
  /** Directory path → descriptor (-1: outside the searched directory), oldest first. */
  private readonly dirs = new Map<string, number>();
  private readonly prefix: string;
  /** Directory descriptors opened and checked (one `open` + one `readlink` each). */
  dirsOpened = 0;

  constructor(private readonly root: string) {
    this.prefix = root.endsWith("/") ? root : `${root}/`;
  }

  /**
   * Opens the regular-file candidate `absolute` (inside the searched directory by construction of
   * the walk); -1 when what would be opened is not inside it. Errors are the `open` errors.
   */
  open(absolute: string): number {
    if (!HAVE_PROC_FD) return openSync(absolute, FILE_FLAGS);
    const slash = absolute.lastIndexOf("/");
    const dirFd = this.dirFd(absolute.slice(0, slash) || "/");
    if (dirFd < 0) return -1;
    return openSync(`/proc/self/fd/${dirFd}/${absolute.slice(slash + 1)}`, FILE_FLAGS);
  }

  private dirFd(dir: string): number {
    const known = this.dirs.get(dir);
    if (known !== undefined) return known;
    let fd = openSync(dir, DIR_FLAGS);
    this.dirsOpened++;
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if (real !== this.root && !real.startsWith(this.prefix)) {
      closeSync(fd);
      fd = -1;
    }
    if (this.dirs.size >= MAX_OPEN_SEARCH_DIRECTORIES) {
      const [oldDir, oldFd] = this.dirs.entries().next().value as [string, number];
      this.dirs.delete(oldDir);
      if (oldFd >= 0) closeSync(oldFd);
    }
    this.dirs.set(dir, fd);
    return fd;
  }

  close(): void {
    for (const fd of this.dirs.values()) if (fd >= 0) closeSync(fd);
    this.dirs.clear();
  }
}
