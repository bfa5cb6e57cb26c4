/**
 * @module
 * The paging engine, protocol-free: estimators, budget fitting, the cursor codec, content versions
 * and the error type. This is also the library's public face for other MCP servers.
 */
export { ByteReader, ByteWriter, malformedCursor } from "./cursor/bytes.js";
export {
  CursorCodec,
  type CursorCodecOptions,
  type CursorKey,
  cursorKeyFromSecret,
  ephemeralCursorKey,
} from "./cursor/codec.js";
export {
  ERROR_CODES,
  type ErrorCode,
  type ErrorDetails,
  isPagewiseError,
  type LimitInfo,
  PagewiseError,
  toPagewiseError,
} from "./errors.js";
export {
  createEstimator,
  defaultEstimator,
  ESTIMATOR_NAMES,
  type Estimator,
  openvikingEstimator,
  type RunningCount,
  type RunningSnapshot,
} from "./estimate/index.js";
export {
  budgetTooSmall,
  codePointFloor,
  type Fitted,
  fitItemCount,
  fitLargest,
  fitTextPrefix,
  type GrowingText,
  type ItemCheckpoints,
  ItemPageCount,
  type ItemPageLayout,
  itemPageRefusal,
  itemPageText,
  itemShare,
  jsonEscaped,
  type LargestFit,
  PieceCosts,
  type Prediction,
  resumeItemCheckpoints,
  TextCosts,
  type TextFitOptions,
  type TextPageLayout,
  WHOLE_REST_ITEMS,
  WHOLE_REST_UNITS,
} from "./fit/fit.js";
export { reservingWalk, type WalkReserve } from "./fit/walk-reserve.js";
export {
  type ByteSource,
  fileByteSource,
  memoryByteSource,
  type OpenFile,
  readWhole,
} from "./io/byte-source.js";
export * from "./limits.js";
export * from "./pager/index.js";
export * from "./source/index.js";
export {
  CONTENT_VERSION_TAG,
  completeUtf8Length,
  type FileVersion,
  FileVersions,
  firstInvalidUtf8,
  identityKey,
  isContentExpectation,
  racyWindowNs,
  type SettleOptions,
  sameState,
  stateVersion,
  systemClock,
  unsettledNs,
  VERSION_DIGEST_BYTES,
  type VersionClock,
  type VersionExpectation,
  versionString,
} from "./version/file-version.js";
