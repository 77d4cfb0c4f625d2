import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { AGENT_STORE_SHARE, createProxySessionRuntime, PROCESS_STORE_CHARS } from "../src/wiring/session-runtime.js";
import { MAX_STORE_CHARS } from "@acp/core";

// The sessions of one `acp proxy` (an HTTP proxy serves one per agent connection) keep a bounded amount of
// provenance text together; a session that ends gives its share back.
const SEND: ActionRequest = { server: "mail", tool: "send_email", arguments: { to: "team@example.com" } };
const READ: ActionRequest = {
  server: "notes",
  tool: "list_notes",
  arguments: {},
  annotations: { readOnlyHint: true },
};

describe("the proxy's session runtime bounds the provenance all its sessions keep", () => {
  it("is twice one session's limit by default: a stdio proxy's one session is bound by its own", () => {
    expect(PROCESS_STORE_CHARS).toBe(2 * MAX_STORE_CHARS);
  });

  it("past the shared room a session keeps no more content and its sends ask; one that closes makes room", async () => {
    const runtime = createProxySessionRuntime({
      trustedServers: [],
      classify: [],
      now: () => new Date(),
      storeBudgetChars: 10_000,
    });
    const route = async (id: string, request: ActionRequest): Promise<string | undefined> =>
      (await runtime.sourceFor(id).evaluate(request, new Date(), []))?.route;
    for (const id of ["a", "b"]) await route(id, READ);
    runtime.observer.result?.("a", "notes", "list_notes", "a".repeat(8_000));
    runtime.observer.result?.("b", "notes", "list_notes", "b".repeat(8_000));
    const b = runtime.sessionOf("b");
    expect(b?.events.find((e) => e.type === "provenance_incomplete")?.message).toContain(
      "keep at most 10000 characters together",
    );
    expect(await route("b", SEND)).toBe("ask");
    expect(await route("a", SEND)).not.toBe("ask");

    runtime.observer.closed?.("a");
    runtime.observer.closed?.("b");
    await route("c", READ);
    runtime.observer.result?.("c", "notes", "list_notes", "c".repeat(8_000));
    expect(runtime.sessionOf("c")?.events.some((e) => e.type === "provenance_incomplete")).toBe(false);
    expect(await route("c", SEND)).not.toBe("ask");
  });

  it("an agent with a token of its own keeps at most a quarter: it cannot make the other agents' sends ask", async () => {
    expect(AGENT_STORE_SHARE).toBe(4);
    const runtime = createProxySessionRuntime({
      trustedServers: [],
      classify: [],
      now: () => new Date(),
      storeBudgetChars: 40_000,
    });
    const route = async (id: string, request: ActionRequest, tokenAgent?: string): Promise<string | undefined> =>
      (await runtime.sourceFor(id, tokenAgent).evaluate(request, new Date(), []))?.route;
    // ci_bot opens three sessions and reads 8,000 characters in each: its share (10,000) runs out
    for (const id of ["bot1", "bot2", "bot3"]) {
      await route(id, READ, "ci_bot");
      runtime.observer.result?.(id, "notes", "list_notes", id.repeat(2_000));
    }
    const cut = ["bot1", "bot2", "bot3"].map((id) =>
      runtime.sessionOf(id)?.events.find((e) => e.type === "provenance_incomplete"),
    );
    expect(cut[0]).toBeUndefined();
    expect(cut[1]?.message).toContain("the sessions of agent `ci_bot` keep at most 10000 characters together");
    expect(await route("bot2", SEND, "ci_bot")).toBe("ask");
    // another named agent and a session with no token of its own still keep what they read
    await route("nightly1", READ, "nightly");
    runtime.observer.result?.("nightly1", "notes", "list_notes", "n".repeat(8_000));
    await route("shared1", READ);
    runtime.observer.result?.("shared1", "notes", "list_notes", "s".repeat(8_000));
    for (const id of ["nightly1", "shared1"]) {
      expect(runtime.sessionOf(id)?.events.some((e) => e.type === "provenance_incomplete")).toBe(false);
      expect(await route(id, SEND, id === "nightly1" ? "nightly" : undefined)).not.toBe("ask");
    }
    // ci_bot's closed sessions give their share back
    for (const id of ["bot1", "bot2", "bot3"]) runtime.observer.closed?.(id);
    await route("bot4", READ, "ci_bot");
    runtime.observer.result?.("bot4", "notes", "list_notes", "b".repeat(9_000));
    expect(runtime.sessionOf("bot4")?.events.some((e) => e.type === "provenance_incomplete")).toBe(false);
    expect(await route("bot4", SEND, "ci_bot")).not.toBe("ask");
  });
});
