import { afterEach, describe, expect, it } from "vitest";
import type { NewPendingConsent } from "@acp/store";
import { at, eventually, readJson, startTestServer, type Json, type TestServer } from "./harness.js";

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const MiB = 1024 * 1024;

async function get(server: TestServer, path: string): Promise<{ status: number; bytes: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`);
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) as Json };
}

function listed(body: Json): Record<string, unknown>[] {
  return at(body, "requests") as Record<string, unknown>[];
}

/** A waiting request of `fs/write_file`, written as the service writes one, `i` ms after `t0`. */
function row(i: number, t0: number, extra: { parameters?: unknown; reasons?: unknown } = {}): NewPendingConsent {
  const id = `cr_${i.toString(16).padStart(32, "0")}`;
  return {
    id,
    nonce: `n_${id}`,
    sessionId: "s",
    server: "fs",
    tool: "write_file",
    request: {
      id,
      agent: { id: "agent-7", name: "agent-7" },
      action: { tool: "write_file", server: "fs", parameters: extra.parameters ?? { path: `/tmp/${i}` } },
      policy: { rule_id: "policy:ask-writes" },
    },
    reasons: extra.reasons ?? [{ source: "policy", code: "rule_matched", message: "writes ask" }],
    createdAtMs: t0 + i,
    expiresAtMs: t0 + i + 600_000,
  };
}

/** Follows `next` from `first` to the end; every page's answer, in order. */
async function allPages(server: TestServer, first: string): Promise<{ bytes: number; body: Json }[]> {
  const pages: { bytes: number; body: Json }[] = [];
  let path: string | null = first;
  while (path !== null) {
    const page = await get(server, path);
    expect(page.status).toBe(200);
    pages.push(page);
    const next = at(page.body, "next");
    path = typeof next === "string" ? `/v1/consent?after=${next}&${first.split("?")[1] ?? ""}` : null;
    expect(pages.length).toBeLessThan(100);
  }
  return pages;
}

describe("GET /v1/consent under a flood", () => {
  it("lists ten waiting calls with 0.9 MB arguments in a small answer, each marked shortened, the whole a GET away", async () => {
    const server = (s = await startTestServer());
    const huge = "x".repeat(900_000);
    const waits = Array.from({ length: 10 }, (_, n) =>
      fetch(`${server.url}/v1/decide?wait=true`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "write_file", arguments: { path: `/tmp/${n}`, content: huge, mode: "w" } }),
      }),
    );
    await eventually(async () => (await server.stores.pending.listPending(Date.now())).length === 10);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^acp_consent_pending 10$/m);
    const list = await get(server, "/v1/consent?status=pending");
    expect(list.status).toBe(200);
    // before: the ten requests whole, 9 MB
    expect(list.bytes).toBeLessThan(100_000);
    expect(at(list.body, "next")).toBeNull();
    const requests = listed(list.body);
    expect(requests).toHaveLength(10);
    for (const request of requests) {
      const parameters = at(request, "request", "action", "parameters") as Record<string, unknown>;
      // the first values in order; the long one by its ends
      expect(Object.keys(parameters)).toEqual(["path", "content", "mode"]);
      expect(parameters["mode"]).toBe("w");
      expect((parameters["content"] as string).length).toBeLessThanOrEqual(512);
      expect(parameters["content"]).toContain("characters not shown");
      const shortened = at(request, "shortened") as Record<string, unknown>;
      expect(shortened["omitted_bytes"]).toBeGreaterThan(899_000);
      expect(shortened["arguments_cut"]).toBe(false);
      expect(shortened["whole"]).toBe(`/v1/consent/${String(request["id"])}`);
      for (const field of ["id", "status", "server", "tool", "session_id", "created_at", "expires_at", "reasons"]) {
        expect(request).toHaveProperty(field);
      }
    }
    const first = requests[0] as Record<string, unknown>;
    const whole = await get(server, String(at(first, "shortened", "whole")));
    expect(whole.status).toBe(200);
    expect(at(whole.body, "request", "action", "parameters", "content")).toBe(huge);
    expect(whole.body).not.toHaveProperty("shortened");

    for (const pending of await server.stores.pending.listPending(Date.now())) {
      await server.stores.pending.decide(
        pending.id,
        "denied",
        { decision: "denied", approver: "t", nonce: pending.nonce },
        Date.now(),
      );
    }
    for (const w of await Promise.all(waits)) expect(at(await readJson(w), "route")).toBe("refuse");
  });

  it("cuts arguments with many values to their first ones and lists a small request whole", async () => {
    const server = (s = await startTestServer());
    const t0 = Date.now();
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
    await server.stores.pending.insert(row(1, t0, { parameters: many }));
    await server.stores.pending.insert(row(2, t0));
    const [cut, small] = listed((await get(server, "/v1/consent")).body);
    const shown = Object.keys(at(cut, "request", "action", "parameters") as object);
    expect(shown.length).toBeGreaterThan(100);
    expect(shown.length).toBeLessThan(2000);
    expect(shown).toEqual(Object.keys(many).slice(0, shown.length)); // a prefix, in order
    expect(Buffer.byteLength(JSON.stringify(at(cut, "request", "action", "parameters")))).toBeLessThanOrEqual(4096);
    expect(at(cut, "shortened", "arguments_cut")).toBe(true);
    expect(at(small, "shortened")).toBeNull();
    expect(at(small, "request", "action", "parameters")).toEqual({ path: "/tmp/2" });
  });

  it("pages with limit and the next cursor: every waiting request once, oldest first", async () => {
    const server = (s = await startTestServer());
    const t0 = Date.now();
    for (let i = 0; i < 130; i++) await server.stores.pending.insert(row(i, t0));
    const firstPage = await get(server, "/v1/consent");
    expect(listed(firstPage.body)).toHaveLength(50); // the default page
    const pages = await allPages(server, "/v1/consent?limit=40");
    expect(pages.map((p) => listed(p.body).length)).toEqual([40, 40, 40, 10]);
    const ids = pages.flatMap((p) => listed(p.body).map((r) => r["id"]));
    expect(ids).toEqual(Array.from({ length: 130 }, (_, i) => `cr_${i.toString(16).padStart(32, "0")}`));
  });

  it("stops a page before 1 MiB and goes on from there", async () => {
    const server = (s = await startTestServer());
    const t0 = Date.now();
    // each listed about 25 kB: its reasons are many texts of 1,024 characters after cutting
    const reasons = Array.from({ length: 24 }, (_, i) => ({
      source: "policy",
      code: "c",
      message: `${i}`.repeat(5000),
    }));
    for (let i = 0; i < 120; i++) await server.stores.pending.insert(row(i, t0, { reasons }));
    const pages = await allPages(server, "/v1/consent?limit=200");
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page.bytes).toBeLessThan(MiB);
    expect(pages.flatMap((p) => listed(p.body)).length).toBe(120);
    const message = at(listed(pages[0]?.body)[0], "reasons", 0, "message") as string;
    expect(message.length).toBeLessThanOrEqual(1024);
  });

  it("refuses a limit out of range and a cursor it did not give with 400 invalid_query", async () => {
    const server = (s = await startTestServer());
    const forged = Buffer.from(JSON.stringify({ after: "x" })).toString("base64url");
    for (const query of ["limit=0", "limit=201", "limit=-1", "after=%2F%2F", `after=${forged}`, "after=abc"]) {
      const res = await get(server, `/v1/consent?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(at(res.body, "error", "code")).toBe("invalid_query");
    }
  });
});
