/**
 * Preloaded with `--import` (through NODE_OPTIONS) by tests that check what a call loads: appends
 * the URL of every module of `dist/` the process loads to the file named by PAGEWISE_MODULE_LOG.
 */
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  if (url.includes("/dist/") && process.env.PAGEWISE_MODULE_LOG) {
    appendFileSync(process.env.PAGEWISE_MODULE_LOG, url + "\\n");
  }
  return next(url, context);
}`)}`,
);
