/**
 * @module
 * The source contract (`Source`) and the pipeline that runs any source (`runSource`): cursor
 * decoding, page parameters carried by cursors, argument checks against a cursor, lowered-limit
 * notes, continuation encoding. Sources implement it in `src/sources/<kind>/`.
 */
export {
  type CursorFormat,
  conflictingArgument,
  decodeSourceCursor,
  encodeSourceCursor,
  type Lowered,
  loweredFields,
  MAX_TOKENS_PARAM,
  type PageParam,
  type PageRequest,
  type ResolvedParams,
  resolvePageParams,
  runSource,
  type Source,
  type SourceRun,
  withFields,
} from "./source.js";
