import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCliChannel, createConsentBroker, type ConsentBrokerOptions } from "@acp/proxy";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { runCli } from "./run.js";
import { ID_A, seedPending, statusOf, tempHome } from "./pending-fixtures.js";
import { generateKeyPairSync, sign as edSign, verify as edVerify } from "node:crypto";
import { canonicalJson } from "@acp/core";

const NOW = new Date("2026-01-15T12:00:00Z");

function testProofs(): Pick<ConsentBrokerOptions, "sign" | "verify"> {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    sign: ({ response }) => {
      const signature = edSign(null, Buffer.from(canonicalJson(response)), privateKey).toString("hex");
      return { ...response, proof: { algorithm: "Ed25519", public_key: "", signature, signed_payload_hash: "" } };
    },
    verify: ({ response }) => {
      const { proof, ...unsigned } = response;
      return edVerify(null, Buffer.from(canonicalJson(unsigned)), publicKey, Buffer.from(proof.signature, "hex"));
    },
  };
}

describe("acp approve", () => {
  it("approves a request the proxy is waiting on, from another terminal", async () => {
    const home = tempHome();
    const db = openPendingConsentDb(join(home, "state.db"));
    try {
      const store = createPendingConsentStore(db);
      const broker = createConsentBroker({
        channels: [createCliChannel({ store, clock: () => NOW, pollIntervalMs: 2 })],
        ...testProofs(),
        clock: () => NOW,
        progressIntervalMs: 0,
      });
      const pending = broker.ask({
        server: "mail",
        tool: "send_email",
        arguments: { to: "bob@example.com", smtp_password: "hunter2" },
        decision: {
          route: "ask",
          action: "ask",
          rule: "policy:ask-mail",
          category: "communication",
          risk_level: "high",
          reasons: [{ source: "policy", code: "rule_matched", message: "asks before mail" }],
          verdicts: [],
        },
        sessionId: "s1",
        timeoutMs: 60_000,
        signal: new AbortController().signal,
      });
      let listed: { id: string; arguments: Record<string, unknown> }[] = [];
      while (listed.length === 0) {
        listed = JSON.parse((await runCli(["pending", "--json"], { env: { ACP_HOME: home } })).stdout) as typeof listed;
      }
      expect(listed[0]?.arguments).toEqual({ to: "bob@example.com", smtp_password: "[redacted]" });
      const id = listed[0]?.id ?? "";
      const out = await runCli(["approve", id, "--modify", '{"to":"carol@example.com"}'], { env: { ACP_HOME: home } });
      expect(out).toMatchObject({ code: 0, stdout: `approved ${id} (scope: once, arguments modified)\n` });
      expect(await pending).toMatchObject({
        kind: "approved",
        arguments: { to: "carol@example.com", smtp_password: "hunter2" },
        scope: "once",
      });
      await broker.close();
    } finally {
      db.close();
    }
  });

  it("records --for-session and --for as the approval scope", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    const out = await runCli(["approve", ID_A, "--for", "10m", "--json"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      id: ID_A,
      decision: "approved",
      scope: { until: "2026-01-15T12:10:00.000Z" },
    });
    expect(statusOf(home, ID_A)).toMatchObject({
      status: "approved",
      answer: { scope: { until: "2026-01-15T12:10:00.000Z" } },
    });
    const home2 = tempHome();
    seedPending(home2, { id: ID_A });
    expect((await runCli(["approve", ID_A, "--for-session"], { env: { ACP_HOME: home2 } })).stdout).toContain(
      "scope: session",
    );
  });

  it("refuses bad input with clear errors and changes nothing", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    const both = await runCli(["approve", ID_A, "--for-session", "--for", "10m"], { env: { ACP_HOME: home } });
    expect(both.code).toBe(2);
    const badFor = await runCli(["approve", ID_A, "--for", "forever"], { env: { ACP_HOME: home } });
    expect(badFor).toMatchObject({ code: 4 });
    expect(badFor.stderr).toContain("--for: invalid duration `forever`");
    const badJson = await runCli(["approve", ID_A, "--modify", "[1]"], { env: { ACP_HOME: home } });
    expect(badJson.code).toBe(4);
    expect(statusOf(home, ID_A)).toMatchObject({ status: "pending" });
  });

  it("refuses a second answer: approvals are single-use", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    expect((await runCli(["approve", ID_A], { env: { ACP_HOME: home } })).code).toBe(0);
    const again = await runCli(["approve", ID_A], { env: { ACP_HOME: home } });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("already approved");
  });

  it("teaches in --help", async () => {
    const out = await runCli(["approve", "--help"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("--for <duration>");
    expect(out.stdout).toContain("Examples:");
  });
});
