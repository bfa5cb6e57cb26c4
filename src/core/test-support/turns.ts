/**
 * Counts the event loop's turns from now until `stop()`: a chain of `setImmediate` callbacks, each
 * of which runs only when the loop gets a turn. Work that never yields (microtasks only) lets none
 * of them run, however long it takes.
 */
export function countTurns(): { stop(): number } {
  let turns = 0;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      stopped = true;
      return turns;
    },
  };
}
