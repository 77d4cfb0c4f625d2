import { describe, expect, it } from "vitest";
import {
  createSession,
  decodeAuthorityToken,
  encodeAuthorityToken,
  signAuthorityToken,
  type AuthorityToken,
  type Session,
} from "../../src/index.js";
import { baseOptions, DAY_INTENT, executingSession, KEY, seededRandom } from "./harness.js";

const PLAN = {
  steps: [
    { action: "calendar.read_events" },
    { action: "email.send", constraints: { to: { from_trusted: "recipients" } } },
  ],
};
const READ = { server: "calendar", tool: "read_events", arguments: { day: "2026-03-02" } };
const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com", body: "agenda" } };

async function planned(): Promise<Awaited<ReturnType<typeof executingSession>>> {
  return executingSession({ plan: PLAN });
}

describe("gap: the authority-token lifecycle is complete", () => {
  it("issues a token bound to step, action, argument hash, intent version, plan hash, tenant and session", async () => {
    const { session } = await planned();
    const token = session.issueToken(SEND);
    expect(token).toMatchObject({
      step: 1,
      action: "email.send",
      intent_version: 1,
      plan_hash: session.planHash,
      tenant: "default",
      session: session.id,
      confirmed: false,
    });
    expect(token.expires_at - token.issued_at).toBe(60_000);
    expect(session.authorize(token, SEND)).toMatchObject({ ok: true, claims: { id: token.id } });
  });

  it("refuses a reused token", async () => {
    const { session } = await planned();
    const token = session.issueToken(READ);
    expect(session.authorize(token, READ).ok).toBe(true);
    expect(session.authorize(token, READ)).toMatchObject({ ok: false, code: "token_reused" });
  });

  it("refuses an expired token", async () => {
    const { session, clock } = await planned();
    const token = session.issueToken(READ);
    clock.advance(60_000);
    expect(session.authorize(token, READ)).toMatchObject({ ok: false, code: "token_expired" });
  });

  it("refuses a forged token: a changed claim, a signature under another key, a made-up signature", async () => {
    const { session } = await planned();
    const token = session.issueToken(READ);
    expect(session.authorize({ ...token, action: "email.send" }, SEND)).toMatchObject({ code: "token_forged" });
    const otherKey = signAuthorityToken(token, new Uint8Array(32).fill(9));
    expect(session.authorize(otherKey, READ)).toMatchObject({ code: "token_forged" });
    expect(session.authorize({ ...token, signature: "0".repeat(64) }, READ)).toMatchObject({ code: "token_forged" });
    expect(session.authorize(token, READ).ok).toBe(true);
  });

  it("refuses a malformed token", async () => {
    const { session } = await planned();
    for (const bad of [null, "", "!!", 42, [], { v: 1 }, "eyJ2IjoxfQ", { ...session.issueToken(READ), extra: 1 }]) {
      expect(session.authorize(bad, READ)).toMatchObject({ ok: false, code: "token_malformed" });
    }
  });

  it("refuses a token of another tenant and of another session (same key)", async () => {
    const { session } = await planned();
    const other = async (tenant: string): Promise<AuthorityToken> => {
      const s = createSession({ ...baseOptions(), tenant, random: seededRandom(tenant) });
      s.setIntent(DAY_INTENT);
      s.submitPlan(PLAN);
      await s.confirmPlan();
      s.start();
      return s.issueToken(READ);
    };
    expect(session.authorize(await other("acme"), READ)).toMatchObject({ code: "token_wrong_tenant" });
    expect(session.authorize(await other("default"), READ)).toMatchObject({ code: "token_wrong_session" });
  });

  it("refuses a token presented with other arguments or for another action", async () => {
    const { session } = await planned();
    const token = session.issueToken(SEND);
    const swapped = { ...SEND, arguments: { to: "team@example.com", body: "all my passwords" } };
    expect(session.authorize(token, swapped)).toMatchObject({ code: "token_wrong_arguments" });
    expect(session.authorize(token, { ...SEND, tool: "send_all" })).toMatchObject({ code: "token_wrong_action" });
    expect(session.authorize(token, SEND).ok).toBe(true);
  });

  it("revokes outstanding tokens on intent update, plan change, termination, suspension and completion", async () => {
    const cases: [string, (s: Session) => Promise<void> | void][] = [
      ["intent update", async (s) => void (await s.confirmIntentUpdate(DAY_INTENT))],
      ["plan change", (s) => void s.submitPlan({ steps: [{ action: "calendar.read_events" }] })],
      ["termination", (s) => s.terminate()],
      ["suspension", (s) => s.suspend()],
      ["completion", (s) => s.complete()],
    ];
    for (const [name, revoke] of cases) {
      const { session } = await planned();
      const token = session.issueToken(READ);
      await revoke(session);
      const result = session.authorize(token, READ);
      expect(result, name).toMatchObject({ ok: false, code: "token_revoked" });
    }
  });

  it("refuses to issue for a step the call does not fit, and binds the step asked for", async () => {
    const { session } = await planned();
    expect(() => session.issueToken(SEND, { step: 0 })).toThrow(
      expect.objectContaining({ code: "authority_refused" }) as Error,
    );
    expect(session.issueToken(SEND, { step: 1 }).step).toBe(1);
  });

  it("refuses at the gate a call the session came to refuse after the token was issued", async () => {
    const { session } = await executingSession({
      plan: PLAN,
      intent: { ...DAY_INTENT, budgets: { max_calls: 1 } },
    });
    const first = session.issueToken(READ);
    const second = session.issueToken(READ);
    expect(session.authorize(first, READ).ok).toBe(true);
    session.recordExecution(READ);
    expect(session.authorize(second, READ)).toMatchObject({ ok: false, code: "budget_exhausted" });
  });

  it("refuses a token presented to the session that did not issue it even when ids and tenant agree", async () => {
    const a = await planned();
    const b = await planned();
    expect(a.session.id).toBe(b.session.id);
    const token = b.session.issueToken(READ);
    expect(a.session.authorize(token, READ)).toMatchObject({ code: "token_unknown" });
  });

  it("drops expired tokens from the registry and records every refusal in the event log", async () => {
    const { session, clock } = await planned();
    const token = session.issueToken(READ);
    clock.advance(120_000);
    session.issueToken(READ);
    expect(session.authorize(token, READ)).toMatchObject({ code: "token_expired" });
    expect(session.events.filter((e) => e.type === "token_refused").map((e) => e.code)).toEqual(["token_expired"]);
  });

  it("round-trips through its string form, which authorize also accepts", async () => {
    const { session } = await planned();
    const token = session.issueToken(READ);
    const text = encodeAuthorityToken(token);
    expect(decodeAuthorityToken(text)).toEqual(token);
    expect(session.authorize(text, READ).ok).toBe(true);
  });

  it("refuses a session whose authority key is shorter than 32 bytes", () => {
    expect(() => createSession({ ...baseOptions(), authorityKey: KEY.subarray(0, 16) })).toThrow(
      expect.objectContaining({ code: "invalid_session_config" }) as Error,
    );
  });
});
