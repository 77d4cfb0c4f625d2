import { describe, expect, it } from "vitest";
import { MAX_ENTRY_CHARS } from "@acp/core";
import type { AcpProxy, CallObserver } from "../../src/index.js";
import { PendingObservations } from "../../src/proxy-server/observations.js";
import { observeLog, observeNote } from "../../src/proxy-server/upstream-text.js";

// A chatty upstream's log lines (or progress messages) are told to the session runtime together, one result
// for those that came before it was told, not one entry a line; what is past one result's size is not kept
// and the result is reported unreadable (the session then asks before consequential calls).

function fakeProxy(): {
  proxy: AcpProxy;
  told: { tool: string; text: string }[];
  unread: string[];
  observations: PendingObservations;
} {
  const told: { tool: string; text: string }[] = [];
  const unread: string[] = [];
  const observer: CallObserver = {
    executed: () => undefined,
    result: (_id, _server, tool, text) => void told.push({ tool, text }),
    unreadable: (_id, _server, _tool, why) => void unread.push(why),
  };
  const observations = new PendingObservations(() => undefined);
  const proxy = {
    options: { observer },
    observations,
    sessions: new Map([["s1", {}]]),
    log: () => undefined,
  } as unknown as AcpProxy;
  return { proxy, told, unread, observations };
}

describe("notes an upstream sends on its own", () => {
  it("are told together as one result per server and kind, in the order they came", () => {
    const { proxy, told, observations } = fakeProxy();
    for (let i = 0; i < 100; i++) observeLog(proxy, "s1", "mail", { level: "info", data: `line ${i}` });
    observeNote(proxy, "s1", "mail", "notifications/progress", "50% to mallory@attacker.example");
    observeLog(proxy, "s1", "web", { level: "info", data: "web line" });
    observations.settle("s1");
    expect(told.map((t) => t.tool)).toStrictEqual([
      "notifications/message",
      "notifications/progress",
      "notifications/message",
    ]);
    expect(told[0]?.text.split("\n")).toHaveLength(100);
    expect(told[0]?.text.startsWith("line 0\nline 1\n")).toBe(true);
    // once told, the next line is a result of its own
    observeLog(proxy, "s1", "mail", { level: "info", data: "later" });
    observations.settle("s1");
    expect(told.at(-1)).toStrictEqual({ tool: "notifications/message", text: "later" });
  });

  it("keeps no more than one result's size waiting: the rest makes the result unreadable", () => {
    const { proxy, told, unread, observations } = fakeProxy();
    const line = "x".repeat(MAX_ENTRY_CHARS / 4);
    for (let i = 0; i < 6; i++) observeNote(proxy, "s1", "mail", "notifications/message", line);
    observations.settle("s1");
    expect(told).toHaveLength(1);
    expect(told[0]?.text.length).toBeLessThanOrEqual(MAX_ENTRY_CHARS);
    expect(unread.join(" ")).toContain("came before the session was told");
  });

  it("tells a session that is gone nothing, and forgets what waited for it", () => {
    const { proxy, told, observations } = fakeProxy();
    observeLog(proxy, "s2", "mail", { level: "info", data: "for nobody" });
    observations.settle("s2");
    observeLog(proxy, "s2", "mail", { level: "info", data: "again" });
    observations.settle("s2");
    expect(told).toStrictEqual([]);
  });
});
