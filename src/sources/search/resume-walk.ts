/**
 * @module
 * The walk a search continuation needs: the files at or after a path, in the walk's order,
 * without reading the directories before it. For a cursor at `a/b/c.txt` it lists `a/b/` (files
 * from `c.txt` on, and the subtrees after them), then `a/` after the `b/` subtree, then the top
 * after `a/` — O(depth) directory listings plus what the page reads, instead of the whole tree.
 * Ignore rules are those of the full walk: each listing gets the `.gitignore` files of every
 * directory above it.
 */
import path from "node:path";
import { compareCodePoints, type WalkEntry, type WalkOptions, walk } from "../walk/index.js";

export interface ResumeWalkOptions extends Omit<WalkOptions, "recursive" | "ancestors"> {
  readonly ancestors: readonly string[];
}

interface Listed {
  readonly key: string;
  readonly entry: WalkEntry;
}

/** Calls `visit` for every file or directory entry at or after `from` (relative, `/`-separated). */
export async function walkFrom(
  dir: string,
  from: string,
  options: ResumeWalkOptions,
  visit: (entry: WalkEntry) => void,
): Promise<{ unreadable: number }> {
  const parts = from.split("/");
  let unreadable = 0;
  for (let level = parts.length - 1; level >= 0; level--) {
    const relDir = parts.slice(0, level).join("/");
    const prefix = relDir === "" ? "" : `${relDir}/`;
    const levelDir = relDir === "" ? dir : path.join(dir, relDir);
    const ancestors = [...options.ancestors, ...chain(dir, parts.slice(0, level))];
    // The cursor's own file is visited again (its page resumes inside it); a directory on the
    // cursor's path was walked by the deeper levels.
    const cursorKey = level === parts.length - 1 ? parts[level]! : `${parts[level]}/`;
    const inclusive = level === parts.length - 1;
    const listed: Listed[] = [];
    const stats = await walk(levelDir, { ...options, recursive: false, ancestors }, (entry) => {
      const key = entry.type === "directory" ? `${entry.path}/` : entry.path;
      listed.push({ key, entry });
    });
    unreadable += stats.unreadable;
    listed.sort((a, b) => compareCodePoints(a.key, b.key));
    for (const { key, entry } of listed) {
      const cmp = compareCodePoints(key, cursorKey);
      if (cmp < 0 || (cmp === 0 && !inclusive)) continue;
      if (entry.type !== "directory") {
        visit({ ...entry, path: prefix + entry.path });
        continue;
      }
      const sub = await walk(
        entry.absolute,
        { ...options, recursive: true, ancestors: [...ancestors, levelDir] },
        (inner) => visit({ ...inner, path: `${prefix}${entry.path}/${inner.path}` }),
      );
      unreadable += sub.unreadable;
    }
  }
  return { unreadable };
}

/** `dir` and its subdirectories along `parts` except the last: the ancestors of `dir/parts…`. */
function chain(dir: string, parts: readonly string[]): string[] {
  const out: string[] = [];
  let current = dir;
  for (let i = 0; i < parts.length; i++) {
    out.push(current);
    current = path.join(current, parts[i]!);
  }
  return out;
}
