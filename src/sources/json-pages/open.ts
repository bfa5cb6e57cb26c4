/**
 * @module
 * `json_open` and `json_close`: detect and validate a JSON, JSONL or JSON-seq file once and keep
 * the result under a `file_id` (see handles.ts).
 */
import path from "node:path";
import { budgetTooSmall, withFields } from "../../core/index.js";
import { detectFormat, type JsonLimits, validate } from "../../json/index.js";
import type { SourceContext } from "../shared/context.js";
import { openVersionedFile } from "../shared/versioned-file.js";
import type { JsonHandles } from "./handles.js";
import type { RequestedFormat } from "./read.js";

export interface JsonOpenRequest {
  readonly path: string;
  readonly format?: RequestedFormat;
  readonly validation?: "probe" | "full";
  readonly maxTokens: number;
  /** Fields reporting a lowered budget (see core `loweredFields`), appended to the answer. */
  readonly loweredFields?: string;
  readonly limits?: Partial<JsonLimits>;
  readonly handles: JsonHandles;
}

/**
 * Opens a file for queries. `detected_format` is the format the handle uses: detection's answer
 * for `format: "auto"` (with `detection: {basis, confidence}`), else the requested format (then
 * validation, not detection, tells whether it was right: FORMAT_MISMATCH with a `retry`).
 */
export async function jsonOpen(ctx: SourceContext, req: JsonOpenRequest): Promise<string> {
  const basis = await openVersionedFile(ctx, req.path);
  try {
    const requested = req.format ?? "auto";
    const mode = req.validation ?? "probe";
    let detection: { basis: string; confidence: string } | undefined;
    let format = requested;
    if (requested === "auto") {
      const d = await detectFormat(basis.bytes, path.basename(basis.realPath), req.limits);
      format = d.detected_format;
      detection = { basis: d.basis, confidence: d.confidence };
    }
    if (format === "auto") throw new Error("unreachable");
    const result = await validate(basis.bytes, format, mode, req.limits, ctx.signal);
    await basis.confirmUnchanged();
    const mtimeMs = Number(basis.stat.mtimeNs / 1_000_000n);
    const render = (fileId: string): string =>
      withFields(
        JSON.stringify({
          file_id: fileId,
          uri: basis.uri,
          requested_format: requested,
          detected_format: format,
          ...(detection ? { detection } : {}),
          validation: {
            mode,
            complete: result.complete,
            bytes_examined: result.bytes_examined,
            ...(result.records_examined !== undefined
              ? { records_examined: result.records_examined }
              : {}),
          },
          source: { size: basis.bytes.size, modified_time: new Date(mtimeMs).toISOString() },
          version: basis.version.version,
        }),
        req.loweredFields,
      );
    // A file_id has a fixed length: measure with a placeholder before creating the handle.
    const probe = render("f_000000000000");
    const tokens = ctx.estimator.count(probe);
    if (tokens > req.maxTokens) throw budgetTooSmall(req.maxTokens, tokens, "the handle");
    const handle = req.handles.add({
      identity: ctx.caller.identity,
      realPath: basis.realPath,
      format,
      digest: basis.version.digest,
      fingerprint: basis.version.fingerprint,
      version: basis.version.version,
    });
    return render(handle.fileId);
  } finally {
    await basis.close();
  }
}

/** `{"file_id","closed"}`: closed is false when the handle was not open (closing twice). */
export function jsonClose(
  ctx: SourceContext,
  req: { fileId: string; maxTokens: number; loweredFields?: string; handles: JsonHandles },
): string {
  const closed = req.handles.close(req.fileId, ctx.caller.identity);
  const text = withFields(JSON.stringify({ file_id: req.fileId, closed }), req.loweredFields);
  const tokens = ctx.estimator.count(text);
  if (tokens > req.maxTokens) throw budgetTooSmall(req.maxTokens, tokens, "the answer");
  return text;
}
