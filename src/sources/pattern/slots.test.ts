/**
 * Slots shared by callers: the order in which waiting calls are granted, each caller's share, and
 * cancelled waits. Grants are observed through the order of settled promises, not time.
 */
import { describe, expect, it } from "vitest";
import { Slots } from "./slots.js";

/** Acquires a slot of `key` and records `name` in `order` when it is granted. */
function queue(slots: Slots, key: string, name: string, order: string[], signal?: AbortSignal) {
  return slots.acquire(signal, key).then(() => {
    order.push(name);
  });
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("Slots", () => {
  it("grants a freed slot to the waiting caller that holds the fewest, not to the first queued", async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    await slots.acquire(undefined, "flood");
    await slots.acquire(undefined, "flood");
    // The flood queues three more calls before the other caller's one.
    for (const n of [1, 2, 3]) void queue(slots, "flood", `flood${n}`, order);
    void queue(slots, "other", "other", order);
    slots.release("flood");
    await settle();
    expect(order).toEqual(["other"]);
    slots.release("flood");
    await settle();
    expect(order).toEqual(["other", "flood1"]);
  });

  it("grants in arrival order between callers holding as many", async () => {
    const slots = new Slots(1);
    const order: string[] = [];
    await slots.acquire(undefined, "a");
    void queue(slots, "b", "b", order);
    void queue(slots, "c", "c", order);
    slots.release("a");
    await settle();
    slots.release("b");
    await settle();
    expect(order).toEqual(["b", "c"]);
  });

  it("keeps one caller within its share while slots stay free for the others", async () => {
    const slots = new Slots(3, 1);
    const order: string[] = [];
    await slots.acquire(undefined, "a");
    expect(slots.free("a")).toBe(0);
    expect(slots.free("b")).toBe(1);
    void queue(slots, "a", "a2", order);
    await settle();
    expect(order).toEqual([]);
    // Another caller is not held up by the one waiting for its own share.
    await queue(slots, "b", "b", order);
    expect(order).toEqual(["b"]);
    slots.release("a");
    await settle();
    expect(order).toEqual(["b", "a2"]);
  });

  it("drops a cancelled wait from the queue and grants the next", async () => {
    const slots = new Slots(1);
    const order: string[] = [];
    await slots.acquire(undefined, "a");
    const abort = new AbortController();
    const cancelled = queue(slots, "b", "b", order, abort.signal);
    void queue(slots, "c", "c", order);
    abort.abort();
    await expect(cancelled).rejects.toMatchObject({ code: "CANCELLED" });
    slots.release("a");
    await settle();
    expect(order).toEqual(["c"]);
    expect(slots.free("d")).toBe(0);
    slots.release("c");
    expect(slots.free("d")).toBe(1);
  });

  it("shares one key between calls that give none", async () => {
    const slots = new Slots(2, 1);
    await slots.acquire(undefined);
    expect(slots.free()).toBe(0);
    expect(slots.free("someone")).toBe(1);
  });
});
