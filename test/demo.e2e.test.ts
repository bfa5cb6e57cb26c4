/**
 * The README's first command must keep working: the demo drives the real server with the SDK
 * client and checks its own claims (exact rebuild, CONTENT_CHANGED), so it is run here as is.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { REPO } from "./support/server.js";

it("npm run demo's script succeeds and shows what it promises", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(REPO, "scripts/demo.js")],
    {
      cwd: REPO,
    },
  );
  expect(stdout).toContain("Pages concatenated == file: YES, byte for byte");
  expect(stdout).toMatch(/rebuilt == file: YES/);
  expect(stdout).toContain('"code":"CONTENT_CHANGED"');
  expect(stdout).toContain("INVALID_CURSOR");
  expect(stdout).toContain("BUDGET_TOO_SMALL");
  expect(stdout).not.toContain("over budget");
});
