import { describe, expect, it } from "vitest";
import { SEALED_SECRET_PREFIX } from "@acp/core";
import { checkServeConfig } from "../src/wiring/serve-config.js";

const SEALED = `${SEALED_SECRET_PREFIX}x`;

describe("serve.agent_servers", () => {
  it("holds a named agent to server names or globs", () => {
    const checked = checkServeConfig({
      serve: { agent_tokens: { ci_bot: SEALED }, agent_servers: { ci_bot: ["github", "ci-*"] } },
    });
    expect(checked).toMatchObject({ ok: true, value: { agentServers: { ci_bot: ["github", "ci-*"] } } });
    const one = checkServeConfig({
      serve: { agent_tokens: { ci_bot: SEALED }, agent_servers: { ci_bot: "github" } },
    });
    expect(one).toMatchObject({ ok: true, value: { agentServers: { ci_bot: ["github"] } } });
  });

  it("refuses a name no agent's token has, an empty list and a bad glob", () => {
    const checked = checkServeConfig({
      serve: {
        agent_tokens: { ci_bot: SEALED, other: SEALED },
        agent_servers: { cibot: ["github"], ci_bot: [], other: ["[x"] },
      },
    });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.problems).toEqual([
      "serve.agent_servers.cibot: no agent of serve.agent_tokens is named `cibot`",
      "serve.agent_servers.ci_bot: must be a server name or glob, or a list of them",
      "serve.agent_servers.other: `[x` is not a server name or glob",
    ]);
  });
});
