/**
 * The limit on waiting consent requests holds across nodes: two `acp serve` nodes on one PostgreSQL, a
 * burst of waiting calls spread over both, and the shared table never holds more pending requests than
 * the limit, in all or for one caller (the agent a token names); every call beyond it gets 429
 * `consent_queue_full`, or, its caller's share full, `route: refuse` with `caller_pending_full`. Each node
 * counted only its own calls and then the table (count, then insert), so the burst passed the limit
 * once per node.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ADVISORY_LOCK } from "@acp/store";
import type { EmbeddedServer } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { eventually, openTestServerAt } from "../harness.js";

const MAX = 10;
const PER_AGENT = 4;
const AGENTS = ["mailer", "planner", "crawler", "filer"];
/** Each agent's token (`serve.agent_tokens`): a caller's share is that of the agent its token names. */
const TOKENS = Object.fromEntries(AGENTS.map((agent) => [agent, `${agent}-agent-token-0123456789`]));
/** Calls of each agent sent to each node: every node alone holds them within its own count per agent. */
const CALLS_PER_AGENT_AND_NODE = PER_AGENT;

const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];
afterAll(async () => {
  for (const node of running) await node.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function startNode(
  options: { readonly pendingLockTimeoutMs?: number } = {},
): Promise<{ readonly node: EmbeddedServer; readonly url: string }> {
  const home = mkdtempSync(join(tmpdir(), "acp-pending-limit-"));
  dirs.push(home);
  const started = await openTestServerAt(home, {
    storageUrl: db.url,
    maxPending: MAX,
    maxPendingPerCaller: PER_AGENT,
    agentTokens: TOKENS,
    changePollMs: 50,
    answerPollMs: 20,
    ...options,
  });
  running.push(started.node);
  return started;
}

/** A write (the starter policy asks a person) that waits for the answer. */
function askAndWait(url: string, agent: string, n: number): Promise<Response> {
  return fetch(`${url}/v1/decide?wait=true`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS[agent] ?? ""}` },
    body: JSON.stringify({ tool: "write_file", agent, arguments: { path: `/tmp/limit-${agent}-${n}` } }),
  });
}

describe("the pending limit across two nodes on one PostgreSQL", () => {
  it("never lets a burst spread over both nodes hold more pending requests than the limit, in all or per agent", async () => {
    const a = await startNode();
    const b = await startNode();
    const pending = a.node.stores.pending;
    let refused = 0;
    const refusals: unknown[] = [];
    const calls = AGENTS.flatMap((agent) =>
      [a, b].flatMap(({ url }, nodeIndex) =>
        Array.from({ length: CALLS_PER_AGENT_AND_NODE }, (_, i) =>
          askAndWait(url, agent, nodeIndex * 100 + i).then(async (res) => {
            if (res.status === 429) {
              refused++;
              refusals.push(await res.json());
              return res;
            }
            // a caller whose share is full is refused at once, not asked; a waiting call answers once denied
            const body = (await res.json()) as { decision: { reasons: { code: string }[] } };
            if (body.decision.reasons[0]?.code === "caller_pending_full") refused++;
            return body;
          }),
        ),
      ),
    );
    // Nobody answers while the burst lands, so rows only accumulate: once every call is either refused or
    // waiting on its row, the table holds the most it ever held.
    const rows = await eventually(async () => {
      const listed = await pending.listPending(Date.now());
      return listed.length + refused === calls.length ? listed : undefined;
    });
    const perAgent = new Map<string, number>();
    for (const row of rows) {
      const agent = (row.request as { agent?: { id?: string } }).agent?.id ?? "";
      perAgent.set(agent, (perAgent.get(agent) ?? 0) + 1);
    }
    expect(rows.length).toBe(MAX);
    for (const [agent, n] of perAgent) expect(n, `pending requests of \`${agent}\``).toBeLessThanOrEqual(PER_AGENT);
    expect(refused).toBe(calls.length - MAX);
    for (const body of refusals) expect(body).toMatchObject({ error: { code: "consent_queue_full" } });

    // every waiting call still gets its answer
    for (const row of rows) {
      const denial = { decision: "denied", approver: "t", nonce: row.nonce };
      expect((await pending.decide(row.id, "denied", denial, Date.now())).ok).toBe(true);
    }
    const waited = (await Promise.all(calls)).filter(
      (res) => !(res instanceof Response) && res.decision.reasons[0]?.code !== "caller_pending_full",
    );
    expect(waited).toHaveLength(MAX);
    for (const body of waited) expect(body).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });
});

describe("a consent request that cannot take its turn at the limit in time", () => {
  it("is refused 429 consent_queue_full, not 500, with nothing written, and the next one gets in", async () => {
    const { node, url } = await startNode({ pendingLockTimeoutMs: 100 });
    const before = (await node.stores.pending.listPending(Date.now())).length;
    // another node's admission holding the limit's lock for longer than this node waits for it
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query("SELECT pg_advisory_lock($1, 0)", [ADVISORY_LOCK.pendingConsent]);
    let refused: Response;
    try {
      refused = await askAndWait(url, "mailer", 900);
    } finally {
      await holder.query("SELECT pg_advisory_unlock($1, 0)", [ADVISORY_LOCK.pendingConsent]);
      await holder.end();
    }
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("consent_queue_full");
    expect(body.error.message).toMatch(/at once/);
    expect((await node.stores.pending.listPending(Date.now())).length).toBe(before);

    const waiting = askAndWait(url, "mailer", 901);
    const row = await eventually(async () =>
      (await node.stores.pending.listPending(Date.now())).find((r) =>
        JSON.stringify(r.request).includes("limit-mailer-901"),
      ),
    );
    const denial = { decision: "denied", approver: "t", nonce: row.nonce };
    expect((await node.stores.pending.decide(row.id, "denied", denial, Date.now())).ok).toBe(true);
    expect(await (await waiting).json()).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });
});
