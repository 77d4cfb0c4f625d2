import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

// A result that reached the agent but could not be recorded (structured content too deep to read, a
// runtime that threw) must not let a value it carried pass as the agent's own: the session then asks
// before every consequential call, as when provenance was cut.
const SEND: ActionRequest = { server: "mail", tool: "send_email", arguments: { to: "evil@attacker.example" } };
const READ: ActionRequest = { server: "web", tool: "fetch", arguments: {}, annotations: { readOnlyHint: true } };

describe("the proxy's session runtime and a result it could not record", () => {
  it("marks the session's provenance incomplete: its sends ask, other sessions are untouched", async () => {
    const runtime = createProxySessionRuntime({ trustedServers: [], classify: [], now: () => new Date() });
    const judge = async (id: string, request: ActionRequest) =>
      await runtime.sourceFor(id).evaluate(request, new Date(), []);
    for (const id of ["hit", "other"]) await judge(id, READ);
    expect((await judge("hit", SEND))?.route).not.toBe("ask");
    runtime.observer.unreadable?.("hit", "web", "fetch", "its structured content could not be read: too deep");
    const verdict = await judge("hit", SEND);
    expect(verdict?.route).toBe("ask");
    expect(verdict?.reasons.map((r) => r.code)).toContain("provenance_incomplete");
    expect(runtime.sessionOf("hit")?.events.find((e) => e.type === "provenance_incomplete")?.message).toBe(
      "the result of `web.fetch` could not be recorded (its structured content could not be read: too deep); consequential calls now ask",
    );
    expect((await judge("other", SEND))?.route).not.toBe("ask");
  });
});
