import { describe, expect, it } from "vitest";
import { validateConsentRequest } from "@acp/core";
import { buildConsentRequest } from "../../src/consent/index.js";
import { askDecision, countingRandom } from "./fixtures.js";

const NOW = new Date("2026-01-15T12:00:00.000Z");

function source(agent?: string) {
  return {
    server: "fs",
    tool: "write_file",
    arguments: { path: "/tmp/notes.txt" },
    decision: askDecision(),
    timeoutMs: 120_000,
    ...(agent !== undefined ? { agent } : {}),
  };
}

describe("the consent request the proxy emits is a valid §4.1 request", () => {
  it("names an agent whose command it does not know `unknown`, not the empty string the schema refuses", () => {
    // `acp proxy` is started by its MCP client and knows no command line of it: before, `command` was ""
    const request = buildConsentRequest(source("claude-desktop"), { now: NOW, random: countingRandom() });
    expect(request.agent).toEqual({ id: "claude-desktop", name: "claude-desktop", command: "unknown" });
    expect(validateConsentRequest(request)).toMatchObject({ ok: true });
  });

  it('names a client that calls itself `""` `unknown` too, and keeps what the proxy was told', () => {
    const nameless = buildConsentRequest(source(""), { now: NOW, random: countingRandom() });
    expect(nameless.agent).toEqual({ id: "unknown", name: "unknown", command: "unknown" });
    expect(validateConsentRequest(nameless)).toMatchObject({ ok: true });
    const agent = { id: "agent-7", name: "mail assistant", command: "node agent.js" };
    const told = buildConsentRequest(source(), { now: NOW, random: countingRandom(), agent });
    expect(told.agent).toEqual(agent);
    expect(validateConsentRequest(told)).toMatchObject({ ok: true });
  });

  it("cuts an agent name longer than the schema's 4096 characters instead of emitting an invalid request", () => {
    const request = buildConsentRequest(source("a".repeat(5000)), { now: NOW, random: countingRandom() });
    expect(request.agent.id).toHaveLength(4096);
    expect(validateConsentRequest(request)).toMatchObject({ ok: true });
  });
});
