/** Stopping `acp serve` (SIGINT/SIGTERM) while calls wait for a person. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, openTestServerAt } from "./harness.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

describe("stopping the service while a call waits for a person", () => {
  it("answers the waiting call and records consent_withdrawn in the chain before the audit closes", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-serve-stop-"));
    homes.push(home);
    const { node: server, url } = await openTestServerAt(home, {
      answerPollMs: 20,
      changePollMs: 50,
    });
    const waiting = fetch(`${url}/v1/decide?wait=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "write_file", arguments: { path: "/tmp/stop" } }),
    }).then(
      async (res) => ({ status: res.status, body: await res.json() }),
      (err: unknown) => ({ status: 0, body: String(err) }),
    );
    const row = await eventually(async () => (await server.stores.pending.listPending(Date.now()))[0]);
    await server.close();
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { event_type?: string; request_id?: string });
    const forRequest = events.filter((e) => e.request_id === row.id).map((e) => e.event_type);
    // before: consent_requested, then nothing (the withdrawal raced the audit's close and was lost)
    expect(forRequest).toEqual(["consent_requested", "consent_withdrawn"]);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ route: "refuse", consent: { outcome: "withdrawn", request_id: row.id } });
  });

  it("answers /readyz 503 from the moment it stops and says how many waiting calls it withdrew", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-serve-stop-"));
    homes.push(home);
    const lines: string[] = [];
    const { node: server, url } = await openTestServerAt(home, {
      answerPollMs: 20,
      changePollMs: 50,
      log: (line) => lines.push(line),
    });
    expect((await server.server.app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(200);
    const waiting = fetch(`${url}/v1/decide?wait=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "write_file", arguments: { path: "/tmp/stop" } }),
    }).then((res) => res.json());
    await eventually(async () => (await server.stores.pending.listPending(Date.now()))[0]);
    const closed = server.close();
    // a load balancer probing while the node drains is told to send no more
    const ready = await server.server.app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(503);
    // a stopping node does not come back by itself: no time to look again is told
    expect(ready.headers["retry-after"]).toBeUndefined();
    const body = ready.json<{ error: { code: string; message: string } }>();
    expect([body.error.code, body.error.message]).toEqual([
      "not_ready",
      "the service is stopping: send requests to another node, or wait for its restart",
    ]);
    await closed;
    expect(await waiting).toMatchObject({ route: "refuse", consent: { outcome: "withdrawn" } });
    expect(lines.filter((l) => l.startsWith("stopping:"))).toEqual([
      "stopping: withdrew 1 call(s) waiting for a person (each answered route refuse, consent outcome withdrawn, " +
        "consent_withdrawn recorded); their agents may ask again on another node",
    ]);
  });

  it("ends an open event stream cleanly (its last chunk sent) instead of cutting it mid-chunk", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-serve-stop-"));
    homes.push(home);
    const { node: server, url } = await openTestServerAt(home);
    const res = await fetch(`${url}/v1/consent/events`);
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(": connected\n\n")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    await server.close();
    // before: the socket was destroyed with the chunked body unfinished, and the read failed ("terminated")
    const rest = await (async () => {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return "ended";
      }
    })().catch((err: unknown) => `failed: ${String((err as Error).cause ?? err)}`);
    expect(rest).toBe("ended");
  });
});
