import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { createProxySessionRuntime, PROCESS_STORE_CHARS } from "../src/wiring/session-runtime.js";
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
});
