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
