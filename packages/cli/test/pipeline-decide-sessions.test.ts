import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ActionRequest, DecisionSource } from "@acp/core";
import { createPipelineDecide } from "../src/wiring/decide.js";
import { openHomeState } from "../src/wiring/home-state.js";
import type { ProxySessionRuntime } from "../src/wiring/session-runtime.js";

// The proxy's decision function asks the session runtime for the session's source with what the proxy knows
// of the call: the downstream session, and the agent its own token names (its share of provenance room).
const READ: ActionRequest = { server: "notes", tool: "list_notes", arguments: {} };

describe("createPipelineDecide with a session runtime", () => {
  const home = mkdtempSync(join(tmpdir(), "acp-decide-sessions-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(
    join(home, "policy.yml"),
    'version: "1"\ndefault_action: deny\nrules:\n  - id: notes\n    match: { tool: list_notes }\n    action: allow\n',
  );

  it("passes the session id and the token's agent (only when there is one) to the runtime's source", async () => {
    const asked: [string, string | undefined][] = [];
    const runtime = {
      sourceFor: (sessionId: string, tokenAgent?: string): DecisionSource => {
        asked.push([sessionId, tokenAgent]);
        return { name: "session", evaluate: () => null };
      },
    } as unknown as ProxySessionRuntime;
    const state = openHomeState(home);
    try {
      const decide = createPipelineDecide({
        state,
        policyPath: join(home, "policy.yml"),
        policyIsDefault: false,
        graph: {},
        now: () => new Date(),
        log: () => undefined,
        sessions: () => runtime,
      });
      expect((await decide(READ, { sessionId: "s1", tokenAgent: "ci_bot" })).route).toBe("accept");
      expect((await decide(READ, { sessionId: "s2" })).route).toBe("accept");
      expect(asked).toEqual([
        ["s1", "ci_bot"],
        ["s2", undefined],
      ]);
    } finally {
      state.close();
    }
  });
});
