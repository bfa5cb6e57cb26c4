/**
 * @module
 * The linear-time engine: re2js, a pure JavaScript port of RE2 (a lazy DFA for yes/no questions,
 * one-pass, bit-state and Pike-VM matchers for positions), chosen over the native `re2` addon
 * and its WebAssembly builds by measurement (docs/patterns.md): nothing to compile or download at
 * install time, no copy of the text per call, and as fast per line. Loaded on the first pattern
 * that needs it, so a search that runs on V8 alone never pays its start-up.
 *
 * If the module cannot be loaded (an incomplete installation), every pattern that needs it fails
 * with an error that names the module and what to do, never a resource-limit message.
 */
import { createRequire } from "node:module";
import type { RE2JS } from "re2js";
import { PagewiseError } from "../../core/index.js";

/** The part of the re2js module the pattern module uses. */
export interface Re2jsModule {
  readonly RE2JS: typeof RE2JS;
}

export type Re2js = RE2JS;

export const LINEAR_ENGINE_PACKAGE = "re2js";

const defaultLoader = (): Re2jsModule =>
  createRequire(import.meta.url)(LINEAR_ENGINE_PACKAGE) as Re2jsModule;

let loader: () => Re2jsModule = defaultLoader;
let loaded: Re2jsModule | undefined;

/** The engine could not be loaded: what failed, and what to do. */
export function engineUnavailable(cause: unknown): PagewiseError {
  const why = cause instanceof Error ? cause.message.split("\n")[0] : String(cause);
  return new PagewiseError(
    "INTERNAL_ERROR",
    `The pattern engine could not be loaded: the package "${LINEAR_ENGINE_PACKAGE}" failed to load (${why}). This installation of pagewise is incomplete.`,
    {
      hint: `Reinstall pagewise's dependencies (npm ci in a clone, or install the package again); "${LINEAR_ENGINE_PACKAGE}" is plain JavaScript and needs no compiler. Until then, literal searches and simple patterns still run.`,
      engine: LINEAR_ENGINE_PACKAGE,
    },
    { cause },
  );
}

/** The re2js module, loaded on first use. */
export function linearEngine(): Re2jsModule {
  if (loaded) return loaded;
  try {
    loaded = loader();
  } catch (err) {
    throw engineUnavailable(err);
  }
  return loaded;
}

/**
 * Replaces how the engine is loaded (tests simulate a missing package with a loader that throws);
 * without an argument, restores the real one.
 */
export function setLinearEngineLoader(load?: () => Re2jsModule): void {
  loader = load ?? defaultLoader;
  loaded = undefined;
}

/** Compiles `re2Source` (RE2 syntax, from re2-source.ts) for the linear engine. */
export function compileLinear(re2Source: string, foldCase: boolean): Re2js {
  const { RE2JS: engine } = linearEngine();
  return engine.compile(re2Source, foldCase ? engine.CASE_INSENSITIVE : 0);
}
