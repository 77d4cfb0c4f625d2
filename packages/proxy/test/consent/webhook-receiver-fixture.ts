/**
 * The set-up of the webhook channel's receiver tests: a receiver written from docs/guides/consent-channels.md
 * alone (its own signature check over the raw bytes), the channel and a broker on a manual clock, and small
 * helpers for raw HTTP and settled promises.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { connect } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createWebhookChannel, type ConsentRequestV02, type WebhookChannel } from "../../src/consent/index.js";
import { ManualTime, eventually, manualBroker } from "./fixtures.js";
import { listen, postCallback, type ReceivedPost } from "./webhook-servers.js";

export const SECRET = "whsec-from-the-docs";

/**
 * The docs' recipe, written without the channel's own helpers: HMAC-SHA256(secret, "<label>.<timestamp>.<raw
 * body>"), the label `acp-delivery` for what the proxy sends, `acp-callback` for what the receiver answers.
 */
export function docsSignature(
  secret: string,
  label: "acp-delivery" | "acp-callback",
  timestamp: string,
  rawBody: Buffer,
): string {
  return `sha256=${createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${label}.${timestamp}.`), rawBody]))
    .digest("hex")}`;
}

export function docsVerify(headers: IncomingMessage["headers"], rawBody: Buffer, nowSeconds: number): boolean {
  const timestamp = headers["x-acp-timestamp"];
  const signature = headers["x-acp-signature"];
  if (typeof timestamp !== "string" || typeof signature !== "string") return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(docsSignature(SECRET, "acp-delivery", timestamp, rawBody));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export type Handler = (post: ReceivedPost & { raw: Buffer }, res: ServerResponse) => void;

/** A receiver whose answer to each POST the test decides (`handler`); raw bytes kept. */
export async function receiver(handler: Handler) {
  const posts: (ReceivedPost & { raw: Buffer })[] = [];
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const post = { headers: req.headers, body: raw.toString("utf8"), raw };
      posts.push(post);
      handler(post, res);
    });
  });
  return { ...server, posts };
}

export async function setup(handler: Handler, extra: Partial<Parameters<typeof createWebhookChannel>[0]> = {}) {
  const time = new ManualTime();
  const hook = await receiver(handler);
  const holder: { channel?: WebhookChannel } = {};
  const callback = await listen((req, res) => void holder.channel?.handleCallback(req, res));
  const channel = createWebhookChannel({
    url: `${hook.url}/acp`,
    secret: SECRET,
    clock: time.clock,
    callbackUrl: `${callback.url}/cb`,
    initialBackoffMs: 1,
    timers: time,
    ...extra,
  });
  holder.channel = channel;
  const broker = manualBroker([channel], time);
  const requests = (): ConsentRequestV02[] =>
    hook.posts.map((p) => JSON.parse(p.body) as ConsentRequestV02).filter((r) => r.type === "consent_request");
  const answer = (request: { id: string; nonce: string }, fields: Record<string, unknown>) =>
    postCallback(`${callback.url}/cb`, JSON.stringify({ request_id: request.id, nonce: request.nonce, ...fields }), {
      secret: SECRET,
      now: time.clock(),
    });
  const close = async () => {
    await hook.close();
    await callback.close();
  };
  return { time, hook, callback, channel, broker, requests, answer, close };
}

/** Advances the manual clock a step at a time until `probe` holds (the code under test arms its timers late). */
export function advanceUntil<T>(
  time: ManualTime,
  stepMs: number,
  probe: () => T | undefined | null | false,
): Promise<T> {
  return eventually(() => {
    const value = probe();
    if (value === undefined || value === null || value === false) time.advance(stepMs);
    return value;
  });
}

/** The value of a settled promise, or undefined while it is pending. */
const settled = new WeakMap<Promise<unknown>, { value: unknown }>();
export function settledValue<T>(promise: Promise<T>): T | undefined {
  if (!settled.has(promise)) {
    settled.set(promise, { value: undefined });
    void promise.then((value) => ((settled.get(promise) as { value: unknown }).value = value));
  }
  return (settled.get(promise) as { value: T | undefined }).value;
}

/** Writes `head` on a raw socket and resolves with the HTTP status of the answer (the socket stays open). */
export function rawRequest(baseUrl: string, head: string): Promise<number> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match !== null) {
        resolve(Number(match[1]));
        socket.destroy();
      }
    });
    socket.on("error", reject);
  });
}

/** A consent request as the broker would build it (only what the channel reads). */
export function makeRequestLike(): ConsentRequestV02 {
  return {
    type: "consent_request",
    version: "0.2.0",
    id: `cr_${"0".repeat(32)}`,
    timestamp: "2026-01-15T12:00:00.000Z",
    expires_at: "2026-01-15T12:02:00.000Z",
    agent: { id: "a", name: "agent", command: "agent" },
    action: { tool: "t", server: "s", category: "write", risk_level: "medium", parameters: {}, description: "" },
    policy: { rule_id: "r", rule_name: "r", required_level: "ask" },
    nonce: "n_00000000-0000-4000-8000-000000000000",
  };
}
