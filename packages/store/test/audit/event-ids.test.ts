import { describe, expect, it } from "vitest";
import { createEventIdBytes, createEventIds } from "../../src/audit/event-ids.js";

const UUID_V4_ID = /^ae_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("audit event ids", () => {
  it("are ae_ and a random UUID v4, distinct across many refills of the random pool", () => {
    const next = createEventIds();
    const ids = Array.from({ length: 5000 }, next);
    for (const id of ids) expect(id).toMatch(UUID_V4_ID);
    expect(new Set(ids).size).toBe(ids.length);
    // every hex digit shows up in every free position: the bytes are used, not a constant
    const digits = new Set(ids.map((id) => id[3]));
    expect(digits.size).toBe(16);
  });

  it("are written as bytes in place, the same shape, each time a new one", () => {
    const ids = createEventIdBytes();
    expect(ids).not.toBeNull();
    if (ids === null) return;
    const into = Buffer.alloc(10 + ids.length * 600, "#");
    for (let i = 0; i < 600; i++) ids.writeNext(into, 5 + i * ids.length);
    const text = into.toString("latin1");
    expect(text.slice(0, 5)).toBe("#####");
    expect(text.slice(5 + 600 * ids.length)).toBe("#####");
    const written = Array.from({ length: 600 }, (_, i) => text.slice(5 + i * ids.length, 5 + (i + 1) * ids.length));
    for (const id of written) expect(id).toMatch(UUID_V4_ID);
    expect(new Set(written).size).toBe(600);
  });

  it("use the injected unique part when one is given", () => {
    let n = 0;
    const next = createEventIds(() => `fixed-${++n}`);
    expect([next(), next()]).toEqual(["ae_fixed-1", "ae_fixed-2"]);
  });
});
