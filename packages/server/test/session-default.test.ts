/** `POST /v1/decide?wait=true` without `?session=`: an approval "for this session" covers no other call. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, eventually, readJson, startTestServer, type TestServer, tokenFor } from "./harness.js";

const TOKEN = "test-token-0123456789";
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ token: TOKEN });
});
afterAll(async () => {
  await s.close();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function pendingIds(): Promise<string[]> {
  const res = await fetch(`${s.url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (at(await readJson(res), "requests") as { id: string }[]).map((r) => r.id);
}

async function approveNext(scope: unknown): Promise<void> {
  const id = await eventually(async () => (await pendingIds())[0]);
  expect((await post(`/v1/consent/${id}/response`, { decision: "approved", scope })).status).toBe(200);
}

describe("a session approval without ?session=", () => {
  it("covers only that call: the same call again (from anyone) asks again; with ?session= it is reused", async () => {
    const call = { tool: "write_file", arguments: { path: "/tmp/same" } };
    const first = post("/v1/decide?wait=true", call);
    await approveNext("session");
    expect(await readJson(await first)).toMatchObject({ route: "accept" });
    // the same call, no session named: asked again (it used to be approved for every caller for 12 hours)
    const second = post("/v1/decide?wait=true", call);
    await approveNext("once");
    expect(await readJson(await second)).toMatchObject({ route: "accept", consent: { outcome: "approved" } });

    // a named session keeps its session approvals
    const named = post("/v1/decide?wait=true&session=agent-7", call);
    await approveNext("session");
    expect(await readJson(await named)).toMatchObject({ route: "accept" });
    const again = await readJson(await post("/v1/decide?wait=true&session=agent-7", call));
    expect(again).toMatchObject({ route: "accept" });
    expect(await pendingIds()).toEqual([]);
  });
});
