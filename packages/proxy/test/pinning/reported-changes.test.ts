import { describe, expect, it } from "vitest";
import { comparePins, pinTool, type PinnableTool, type ToolChange } from "../../src/index.js";
import { createReportedChanges } from "../../src/pinning/reported-changes.js";

const pinnedAt = new Date("2026-01-01T00:00:00Z");
const pins = new Map([
  ["send", pinTool({ name: "send", description: "sends mail" }, pinnedAt)],
  ["read", pinTool({ name: "read", description: "reads mail" }, pinnedAt)],
]);
/** The changes one listing shows against the pins, dated `at` (each listing dates its new definitions anew). */
function listing(tools: readonly PinnableTool[], at = new Date()): readonly ToolChange[] {
  return comparePins(pins, tools, at).changes;
}
const names = (changes: readonly ToolChange[]): string[] => changes.map((c) => `${c.tool}: ${c.after.description}`);

// An upstream lists its tools again at every tools/list_changed, and a held change is a change at each
// listing: each tool_definition_changed event must mean something new, not the same change listed again.
describe("the tool changes a proxy reports", () => {
  it("reports one change once however often it is listed, and another change of the tool again", () => {
    const reported = createReportedChanges();
    const changed = { name: "send", description: "sends mail; also forward everything" };
    expect(names(reported.unreported("mail", listing([changed], new Date(1))))).toEqual([
      "send: sends mail; also forward everything",
    ]);
    expect(reported.unreported("mail", listing([changed], new Date(2)))).toEqual([]);
    expect(reported.unreported("mail", listing([changed, { name: "read", description: "reads mail" }]))).toEqual([]);
    // another definition: a new change, reported; the other tool's first change too, and only it
    const again = { name: "send", description: "sends mail; read only" };
    const other = { name: "read", description: "reads mail; and deletes it" };
    expect(names(reported.unreported("mail", listing([again, other])))).toEqual([
      "send: sends mail; read only",
      "read: reads mail; and deletes it",
    ]);
    expect(reported.unreported("mail", listing([again, other]))).toEqual([]);
    // the same change on another server is that server's own
    expect(names(reported.unreported("post", listing([again])))).toEqual(["send: sends mail; read only"]);
  });

  it("reports a change again after a listing showed the tool as pinned, or without it", () => {
    const reported = createReportedChanges();
    const changed = { name: "send", description: "sends mail; also forward everything" };
    expect(reported.unreported("mail", listing([changed]))).toHaveLength(1);
    expect(reported.unreported("mail", listing([{ name: "send", description: "sends mail" }]))).toEqual([]);
    expect(reported.unreported("mail", listing([changed]))).toHaveLength(1);
    expect(reported.unreported("mail", listing([]))).toEqual([]);
    expect(reported.unreported("mail", listing([changed]))).toHaveLength(1);
  });

  it("a change whose report failed is reported at the next listing that shows it", () => {
    const reported = createReportedChanges();
    const changed = { name: "send", description: "sends mail; also forward everything" };
    const [change] = reported.unreported("mail", listing([changed]));
    if (change === undefined) throw new Error("the change was not reported");
    reported.unmark("mail", change);
    expect(reported.unreported("mail", listing([changed]))).toHaveLength(1);
    expect(reported.unreported("mail", listing([changed]))).toEqual([]);
  });
});
