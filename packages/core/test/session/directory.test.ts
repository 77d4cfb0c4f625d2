import { describe, expect, it } from "vitest";
import { createSession, createSessionDirectory } from "../../src/index.js";
import { baseOptions, DAY_INTENT, seededRandom } from "./harness.js";

const READ = { server: "calendar", tool: "read_events", arguments: {} };

function tenantSession(tenant: string, id: string): ReturnType<typeof createSession> {
  const s = createSession({
    ...baseOptions(),
    tenant,
    id,
    random: seededRandom(id),
    settings: { require_plan: false },
  });
  s.setIntent(DAY_INTENT);
  s.start();
  return s;
}

describe("multi-tenant mode", () => {
  it("never hands one tenant's session to another", () => {
    const directory = createSessionDirectory();
    directory.add(tenantSession("acme", "s1"));
    expect(directory.get("acme", "s1").tenant).toBe("acme");
    expect(() => directory.get("globex", "s1")).toThrow(expect.objectContaining({ code: "cross_tenant" }) as Error);
    expect(() => directory.get("acme", "nope")).toThrow(expect.objectContaining({ code: "unknown_session" }) as Error);
    expect(() => directory.add(tenantSession("globex", "s1"))).toThrow(
      expect.objectContaining({ code: "duplicate_session" }) as Error,
    );
  });

  it("refuses at the gate a token presented by another tenant, and accepts it from its own", () => {
    const directory = createSessionDirectory();
    const acme = tenantSession("acme", "s1");
    directory.add(acme);
    directory.add(tenantSession("globex", "s2"));
    const token = acme.issueToken(READ);
    expect(directory.authorize("globex", token, READ)).toMatchObject({ ok: false, code: "token_wrong_tenant" });
    expect(directory.authorize("acme", "garbage", READ)).toMatchObject({ ok: false, code: "token_malformed" });
    expect(directory.authorize("acme", token, READ)).toMatchObject({ ok: true });
  });
});
