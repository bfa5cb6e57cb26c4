/**
 * @module
 * All of a command's content into a pipe, as the Unix tool it replaces prints it: `read` copies
 * the file (`cat`), `list` and `search` walk their pages (`find`, `rg`). Pages are walked with a
 * large budget (STREAM_PAGE_TOKENS), since none is shown to a model.
 */
import { openFileConfined } from "../access/index.js";
import { identityKey } from "../core/index.js";
import { changedWhileReading } from "../sources/shared/versioned-file.js";
import type { ToolContext } from "../tools/context.js";
import { CALLS } from "./calls.js";
import { STREAM_READ_BYTES } from "./limits.js";
import type { Invocation } from "./output.js";
import type { PageRenderer } from "./render.js";
import type { Stdout } from "./stdout.js";

/**
 * `read FILE` into a pipe: the file's bytes as they are, like `cat` (no page, so no version is
 * taken: one pass through one confined descriptor, then CONTENT_CHANGED if the file's identity
 * moved while it was copied, which a page would also report).
 */
export async function copyFile(ctx: ToolContext, target: string, out: Stdout): Promise<void> {
  const opened = await openFileConfined(ctx.caller.roots, target);
  try {
    const size = Number(opened.stat.size);
    for (let position = 0; position < size; ) {
      // A fresh buffer each step: the pipe may still hold the last one.
      const buffer = Buffer.allocUnsafe(Math.min(STREAM_READ_BYTES, size - position));
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      await out.write(buffer.subarray(0, bytesRead));
      position += bytesRead;
    }
    const after = await opened.handle.stat();
    if (identityKey(after) !== identityKey(opened.stat)) throw changedWhileReading();
  } finally {
    opened.handle.close().catch(() => undefined);
  }
}

/** Every page of `inv`, rendered as content, from the first to the last. */
export async function walkPages(
  inv: Invocation,
  ctx: ToolContext,
  renderer: PageRenderer,
  out: Stdout,
): Promise<void> {
  let args: Record<string, unknown> = { ...inv.args };
  for (;;) {
    const text = await CALLS[inv.command](args, ctx);
    const rendered = await renderer.render(text);
    if (rendered === undefined) {
      await out.write(text); // read's line mode: the text is the content
      return;
    }
    await out.write(rendered.stdout);
    if (rendered.stderr.length > 0) process.stderr.write(`${rendered.stderr.join("\n")}\n`);
    const next = (JSON.parse(text) as { next_cursor?: string | null }).next_cursor;
    if (!next) break;
    args = { cursor: next };
  }
  await out.write(renderer.finish());
}
