/**
 * @module
 * The parts every call of one process shares (cursor codec, estimator, settings), built from the
 * command's flags. `serve` makes the MCP server's `Engine` of them; a terminal command builds its
 * tool context from them without loading the server.
 */
import { CursorCodec, createEstimator, ESTIMATOR_NAMES, type Estimator } from "../core/index.js";
import type { ToolSettings } from "../tools/index.js";
import { loadCursorKey, settingsFrom } from "./settings.js";
import { UsageError } from "./usage.js";

export interface EngineParts {
  readonly codec: CursorCodec;
  readonly estimator: Estimator;
  readonly settings: ToolSettings;
}

/**
 * The engine of this process. `persistentKey`: without a key given, use the one kept in the
 * user's config directory (terminal commands, so that a printed cursor works in the next command)
 * rather than a random one (serve).
 */
export async function engineFrom(
  values: Record<string, unknown>,
  persistentKey: boolean,
): Promise<EngineParts> {
  const name = (values.estimator as string | undefined) ?? "default";
  if (!(ESTIMATOR_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--estimator takes one of ${ESTIMATOR_NAMES.join(", ")} (got "${name}")`);
  }
  const estimator = await createEstimator(name).catch((err: Error) => {
    // The exact estimators need the optional gpt-tokenizer package: a choice the user can change,
    // not a bug, so one line saying what to install (exit status 2) instead of a stack.
    throw new UsageError(err.message);
  });
  const key = loadCursorKey(values["cursor-key-file"] as string | undefined, persistentKey);
  return {
    codec: new CursorCodec({ key }),
    estimator,
    settings: settingsFrom(values),
  };
}
