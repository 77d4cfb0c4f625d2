import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

// `acp proxy`'s session runtime labels a trusted server's results `system_policy`; the proxy now tells it
// which results are the call's error, and those it records as untrusted text (they speak of the call).
const READ: ActionRequest = { server: "bank", tool: "lookup", arguments: {}, annotations: { readOnlyHint: true } };

describe("the proxy's session runtime records a trusted server's error as untrusted", () => {
  it("labels an error untrusted and an answer trusted", async () => {
    const runtime = createProxySessionRuntime({
      trustedServers: ["bank"],
      classify: [],
      now: () => new Date(),
    });
    await runtime.sourceFor("s1").evaluate(READ, new Date(), []);
    runtime.observer.result("s1", "bank", "lookup", "payees: DE89 3704 0044 0532 0130 00");
    runtime.observer.result("s1", "bank", "lookup", "payee DE44 5001 0517 5407 3249 31 not found", { error: true });
    const labels = runtime
      .sessionOf("s1")
      ?.provenance.filter((e) => e.source.startsWith("bank.lookup"))
      .map((e) => e.label);
    expect(labels).toStrictEqual(["system_policy", "external_untrusted"]);
  });
});
