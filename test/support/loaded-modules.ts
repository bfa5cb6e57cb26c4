/**
 * What a process logged by module-log.mjs loaded, as the modules of the build: paths relative to
 * dist/ ("sources/text/read-text.js"), and "node_modules/…" for dependencies. A chunk of the
 * bundled command (dist/bundle/, scripts/build.js) stands for the modules bundled into it, which
 * esbuild names in a `// path` comment before each one's code.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Env for a process whose loads go to `log`. */
export function moduleLogEnv(log: string): Record<string, string> {
  const hook = fileURLToPath(new URL("./module-log.mjs", import.meta.url));
  return { NODE_OPTIONS: `--import ${hook}`, PAGEWISE_MODULE_LOG: log };
}

export function loadedModules(log: string): string[] {
  const urls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  const modules = new Set<string>();
  for (const url of urls) {
    if (!url.includes("/dist/bundle/")) {
      modules.add(url.replace(/^.*\/dist\//, ""));
      continue;
    }
    for (const m of readFileSync(fileURLToPath(url), "utf8").matchAll(/^\/\/ (\S+\.[cm]?js)$/gm))
      modules.add(m[1]!.replace(/^dist\//, ""));
  }
  return [...modules];
}
