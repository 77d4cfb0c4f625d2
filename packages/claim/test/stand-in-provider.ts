import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Answers one request of the stand-in; `body` is the request body as text. */
export type StandInRoute = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A scriptable claim provider on 127.0.0.1: well-behaved by default, each route replaceable by a hostile one. */
export interface StandInProvider {
  /** `http://127.0.0.1:{port}`. */
  readonly url: string;
  /** Every request as `METHOD /path`, in order. */
  readonly seen: string[];
  /** Replaces the answer to `METHOD /path`. */
  route(key: string, answer: StandInRoute): void;
  close(): Promise<void>;
}

/** Sends `value` as a JSON answer. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The sandbox id the stand-in creates (the `sbx_` + 22 base62 shape `acp claim` saves). */
export const STAND_IN_SANDBOX_ID = "sbx_AAAAAAAAAAAAAAAAAAAAAA";

/** Starts a stand-in provider that answers the agent's calls as a correct provider would (difficulty 4). */
export async function startStandIn(): Promise<StandInProvider> {
  const seen: string[] = [];
  const routes = new Map<string, StandInRoute>();
  const json =
    (status: number, value: unknown): StandInRoute =>
    (_req, res) =>
      sendJson(res, status, value);
  routes.set(
    "GET /.well-known/agent-access",
    json(200, { acp_version: "1.0", sandbox: { admission: ["proof_of_work"] }, content_types: ["faq"] }),
  );
  routes.set(
    "GET /v1/sandboxes/challenge",
    json(200, { challenge: "stand-in-1", difficulty: 4, algorithm: "sha256_leading_zeros" }),
  );
  routes.set(
    "POST /v1/sandboxes",
    json(201, {
      id: STAND_IN_SANDBOX_ID,
      public_handle: "handle1",
      status: "active",
      expires_at: "2026-03-03T12:00:00.000Z",
      agent_token: { token: "rr_sbx_token", token_type: "Bearer" },
    }),
  );
  routes.set("POST /v1/faqs", json(201, { faq_id: "faq_1" }));
  routes.set(
    "POST /v1/faqs/faq_1/publish",
    json(200, {
      published_url: "http://handle2.pub.localhost/widget",
      previous_handle: "handle1",
      new_handle: "handle2",
      handle_rotated: true,
    }),
  );
  routes.set(
    `POST /v1/sandboxes/${STAND_IN_SANDBOX_ID}/claim`,
    json(200, {
      claim_code: "ACP-ABCD-EFGH-JKLM-NPQR",
      claim_url: "http://admin.localhost/claim",
      expires_at: "2026-03-01T13:00:00.000Z",
    }),
  );
  routes.set(
    `POST /v1/sandboxes/${STAND_IN_SANDBOX_ID}/preview`,
    json(200, { exchange_url: "http://preview.localhost/exchange#x", expires_at: "2026-03-01T12:10:00.000Z" }),
  );
  const server = createServer((req, res) => {
    const key = `${req.method ?? ""} ${(req.url ?? "").split("?")[0] ?? ""}`;
    seen.push(key);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = routes.get(key) ?? json(404, { error: { code: "not_found", message: "not found" } });
      answer(req, res, Buffer.concat(chunks).toString("utf8"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    route: (key, answer) => void routes.set(key, answer),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
