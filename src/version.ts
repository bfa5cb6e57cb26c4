import { readFileSync } from "node:fs";

/** The package's version, read from package.json next to the build. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;
