/**
 * @module
 * Progress of a long scan on a terminal: one line on stderr, shown only once the scan has run for
 * a while (quick commands print nothing extra), rewritten in place and erased at the end.
 */

/** A scan shorter than this shows no progress line. */
export const PROGRESS_DELAY_MS = 1000;
/** The line is rewritten at most this often. */
export const PROGRESS_INTERVAL_MS = 100;

export interface ProgressLine {
  report(count: number): void;
  done(): void;
}

export function progressLine(
  stream: NodeJS.WritableStream,
  unit: string,
  now: () => number = Date.now,
): ProgressLine {
  const start = now();
  let lastShown = 0;
  let shown = false;
  return {
    report(count) {
      const t = now();
      if (t - start < PROGRESS_DELAY_MS || t - lastShown < PROGRESS_INTERVAL_MS) return;
      lastShown = t;
      shown = true;
      stream.write(`\rpagewise: ${count.toLocaleString("en-US")} ${unit} scanned…\x1b[K`);
    },
    done() {
      if (shown) stream.write("\r\x1b[K");
      shown = false;
    },
  };
}
