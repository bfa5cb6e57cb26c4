/**
 * @module
 * Access: roots, path confinement that holds for what is actually opened, and caller identities.
 */
export type { Caller } from "./caller.js";
export {
  isInside,
  type OpenedFile,
  openFileConfined,
  Roots,
  resolveDirectoryConfined,
} from "./roots.js";
