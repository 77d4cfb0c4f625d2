/**
 * `injectCallCredentials` tells a failure of the credential hook from a failure to record
 * `credential_injected` in the audit log: the in-process guard refuses the first as `credentials_failed`
 * and the second as `audit_failed` (the log stopped recording, so `reopen()` is the way out), and neither
 * message names a secret value.
 */
import { describe, expect, it } from "vitest";
import { injectCallCredentials, type CredentialHook } from "../../src/gate/index.js";

const SECRET = "sk_live_0123456789abcdef";
const call = { server: "pay", tool: "charge", arguments: { amount: 5 }, base: { call_id: "c1" } };

function hook(fail?: string): CredentialHook {
  return {
    inject: (_server, _tool, args) =>
      fail !== undefined
        ? Promise.reject(new Error(fail))
        : Promise.resolve({ arguments: { ...args, api_key: SECRET }, injected: ["stripe"] }),
    secretValues: () => [SECRET],
  };
}

describe("injectCallCredentials", () => {
  it("forwards with the credential in and records credential_injected", async () => {
    const recorded: string[] = [];
    const step = await injectCallCredentials(hook(), { record: (t) => void recorded.push(t) }, call);
    expect(step).toEqual({ kind: "forward", arguments: { amount: 5, api_key: SECRET }, injected: ["stripe"] });
    expect(recorded).toEqual(["credential_injected"]);
  });

  it("a hook that fails is a credentials failure, its message without the secret", async () => {
    const step = await injectCallCredentials(hook(`no vault entry near ${SECRET}`), { record: () => undefined }, call);
    expect(step.kind === "refused" && step.cause).toBe("credentials");
    expect(step.kind === "refused" && step.message).not.toContain(SECRET);
  });

  it("an audit that cannot record credential_injected is an audit failure, not a credentials one", async () => {
    const audit = {
      record: () => Promise.reject(new Error(`the audit log stopped recording: ENOSPC (${SECRET})`)),
    };
    const step = await injectCallCredentials(hook(), audit, call);
    expect(step.kind).toBe("refused");
    expect(step.kind === "refused" && step.cause).toBe("audit");
    expect(step.kind === "refused" && step.message).toContain("ENOSPC");
    expect(step.kind === "refused" && step.message).not.toContain(SECRET);
  });
});
