/**
 * Test support: a source context over a fresh temporary root, as the tools layer would build it
 * for one caller (an ephemeral cursor key, the default estimator, a version cache of its own).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Roots } from "../../../access/index.js";
import {
  CursorCodec,
  defaultEstimator,
  ephemeralCursorKey,
  FileVersions,
} from "../../../core/index.js";
import type { SourceContext } from "../context.js";

export function sourceContext(rootDirs: string[], identity = "test"): SourceContext {
  return {
    caller: { identity, roots: new Roots(rootDirs) },
    codec: new CursorCodec({ key: ephemeralCursorKey() }),
    estimator: defaultEstimator,
    versions: new FileVersions(),
  };
}

/** A context whose one root is a new temporary directory; `cleanup` removes it. */
export function tempSourceContext(prefix: string): {
  dir: string;
  ctx: SourceContext;
  cleanup: () => void;
} {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
  return {
    dir,
    ctx: sourceContext([dir]),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
