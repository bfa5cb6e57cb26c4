/**
 * Test support: the pagewise MCP server built from `src/` and driven by the SDK's own client over
 * the SDK v2's in-memory transport — the whole protocol path without a process or a build, so suites
 * that make hundreds of calls stay fast. One stdio smoke test per transport stays in the e2e tests.
 */
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { Roots } from "../../src/access/index.js";
import {
  CursorCodec,
  createEstimator,
  DEFAULT_MAX_READ_TOKENS,
  DEFAULT_MAX_TOKENS,
  type Estimator,
  ephemeralCursorKey,
} from "../../src/core/index.js";
import { createEngine, createMcpServer } from "../../src/mcp/index.js";
import type { ToolSettings } from "../../src/tools/index.js";
import { outcomeOf, type ServerHandle, sdkClient, type ToolOutcome } from "./server.js";

export interface InMemoryServer extends ServerHandle {
  readonly estimator: Estimator;
}

export interface InMemoryOptions {
  readonly estimator?: string;
  readonly settings?: Partial<ToolSettings>;
  /** The caller's identity (cursors are bound to it). */
  readonly identity?: string;
  /** Share a codec between servers (a cursor made by one is accepted by the other). */
  readonly codec?: CursorCodec;
}

export async function startInMemory(
  rootDirs: string[],
  options: InMemoryOptions = {},
): Promise<InMemoryServer> {
  const estimator = await createEstimator(options.estimator ?? "default");
  const engine = createEngine({
    codec: options.codec ?? new CursorCodec({ key: ephemeralCursorKey() }),
    estimator,
    settings: {
      defaultMaxTokens: DEFAULT_MAX_TOKENS,
      maxTokensCap: 25_000,
      maxReadTokens: DEFAULT_MAX_READ_TOKENS,
      searchStallMs: 5000,
      ...options.settings,
    },
  });
  const caller = { identity: options.identity ?? "anonymous", roots: new Roots(rootDirs) };
  const server = createMcpServer(engine, () => caller);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  // A connected server instance speaks the 2025 handshake; the 2026-07-28 paths are covered by
  // the stdio and HTTP end-to-end tests.
  const client = sdkClient("legacy");
  await client.connect(clientSide);
  return {
    client,
    estimator,
    async call(tool, args): Promise<ToolOutcome> {
      return outcomeOf(await client.callTool({ name: tool, arguments: args }));
    },
    async close() {
      await client.close();
      await server.close();
    },
    stderr: () => "",
  };
}
