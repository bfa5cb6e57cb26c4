#!/usr/bin/env node
// The bundled command (scripts/build.js), or its modules one by one with PAGEWISE_UNBUNDLED=1.
const entry = process.env.PAGEWISE_UNBUNDLED ? "../dist/cli/main.js" : "../dist/bundle/main.js";
const { main } = await import(entry);

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`pagewise: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
