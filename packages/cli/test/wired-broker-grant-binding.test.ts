/**
 * A `--for` window acp proxy keeps in state.db (consent_grants) is reused by every proxy of the home only after
 * its signed response verifies against the home's key, the exact call, and the request stored beside it: a
 * row whose request is not the one the response answers (another id or nonce) approves nothing, so the
 * audit's `approved_request_id` can only name the request a person approved (§6.3 4).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openPendingConsentDb } from "@acp/store";
import { ed25519KeyPairFromSeed, type Decision } from "@acp/core";
import type { ChannelDelivery, ConsentChannel, HumanAnswer } from "@acp/proxy/consent";
import { createWiredBroker } from "../src/wiring/consent-broker.js";
import { openHomeState } from "../src/wiring/home-state.js";
import { fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("wired-grant-binding");
afterAll(root.cleanup);
const { home } = fixtureHome(root.dir);
const pair = ed25519KeyPairFromSeed(new Uint8Array(32).fill(11));
const clock = (): Date => new Date("2026-01-15T12:00:00Z");

const decision: Decision = {
  route: "ask",
  action: "ask",
  rule: "policy:ask-writes",
  category: "write",
  risk_level: "medium",
  reasons: [],
  verdicts: [],
};

/** A channel that answers every request with `answer`, and records what it was handed. */
function answering(answer: HumanAnswer): { channel: ConsentChannel; deliveries: ChannelDelivery[] } {
  const deliveries: ChannelDelivery[] = [];
  const channel: ConsentChannel = {
    name: "app",
    isAvailable: () => true,
    deliver: (delivery) => {
      deliveries.push(delivery);
      return Promise.resolve(answer);
    },
  };
  return { channel, deliveries };
}

/** A channel that never answers (the request waits until withdrawn). */
function silent(): { channel: ConsentChannel; deliveries: ChannelDelivery[] } {
  const deliveries: ChannelDelivery[] = [];
  const channel: ConsentChannel = {
    name: "app",
    isAvailable: () => true,
    deliver: (delivery) =>
      new Promise<HumanAnswer>((_resolve, reject) => {
        deliveries.push(delivery);
        delivery.signal.addEventListener("abort", () => reject(new Error("aborted")));
      }),
  };
  return { channel, deliveries };
}

function broker(channel: ConsentChannel) {
  return createWiredBroker({
    state: openHomeState(home),
    terminal: false,
    clock,
    channels: [channel],
    key: { get: () => Promise.resolve(pair), seed: () => Promise.reject(new Error("no")), ephemeral: false },
  });
}

const call = (sessionId: string, signal: AbortSignal) => ({
  server: "fs",
  tool: "write_file",
  arguments: { path: "/tmp/window.txt", content: "x" },
  decision,
  sessionId,
  timeoutMs: 60_000,
  signal,
});

describe("a stored window approval beside a request it does not answer", () => {
  it("is reused as stored, and asked again once its request is swapped for another", async () => {
    const first = broker(
      answering({ decision: "approved", scope: { until: "2026-01-15T12:10:00.000Z" }, approverId: "app:alice" })
        .channel,
    );
    try {
      expect(await first.ask(call("s-1", new AbortController().signal))).toMatchObject({ kind: "approved" });
    } finally {
      await first.close();
    }

    // another proxy of the home (a restarted client): the window is reused, nobody asked
    const asked = silent();
    const second = broker(asked.channel);
    try {
      expect(await second.ask(call("s-2", new AbortController().signal))).toMatchObject({
        kind: "approved",
        reused: true,
      });
      expect(asked.deliveries).toHaveLength(0);
    } finally {
      await second.close();
    }

    // the row's request becomes another (well-formed) one: its id and nonce are not the response's
    const db = openPendingConsentDb(join(home, "state.db"));
    try {
      const rows = db
        .prepare<[], { rowid: number; grant_json: string }>("SELECT rowid, grant_json FROM consent_grants")
        .all();
      expect(rows).toHaveLength(1);
      for (const row of rows) {
        const grant = JSON.parse(row.grant_json) as { request: Record<string, unknown> };
        grant.request = {
          ...grant.request,
          id: "cr_00000000000000000000000000000bad",
          nonce: "n_00000000-0000-4000-8000-000000000bad",
        };
        db.prepare("UPDATE consent_grants SET grant_json = ? WHERE rowid = ?").run(JSON.stringify(grant), row.rowid);
      }
    } finally {
      db.close();
    }
    const third = silent();
    const later = broker(third.channel);
    const stop = new AbortController();
    try {
      const outcome = later.ask(call("s-3", stop.signal));
      for (let i = 0; i < 200 && third.deliveries.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(third.deliveries).toHaveLength(1); // a person is asked: the row approved nothing
      stop.abort();
      expect((await outcome).kind).toBe("withdrawn");
    } finally {
      await later.close();
    }
  });
});
