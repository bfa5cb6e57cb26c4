import type { z } from "zod";
import type { ToolContext } from "./context.js";

/** A tool: its published name, schema and description, and a handler that returns the text block. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: S;
  run(args: z.infer<S>, ctx: ToolContext): Promise<string>;
}
