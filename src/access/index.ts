/**
 * @module
 * Access: roots, path confinement that holds for what is actually opened, and caller identities.
 */
export type { Caller } from "./caller.js";
export type { Descriptor } from "./descriptor.js";
export {
  AUTH_FILE_POLL_MS,
  AuthFileError,
  AuthFileVerifier,
  type AuthFileVerifierOptions,
  bearerToken,
  type Identity,
  parseAuthFile,
  type TokenVerifier,
  tokenSha256,
} from "./identities.js";
export {
  isInside,
  type OpenedFile,
  openFileConfined,
  Roots,
  resolveDirectoryConfined,
} from "./roots.js";
