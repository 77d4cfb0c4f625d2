import type { IncomingMessage, ServerResponse } from "node:http";
import { parseApprovalDuration } from "../../scope.js";
import type { ApprovalScope, HumanAnswer } from "../../types.js";
import { checkHumanAnswer } from "../../response.js";
import type { ConsentTimers } from "../../timers.js";
import { hasHiddenCharacters, printable } from "../terminal/format.js";

/** The largest callback body accepted. */
export const MAX_CALLBACK_BYTES = 64 * 1024;

/** The callback body a webhook receiver POSTs back (signed like the request). */
export interface WebhookCallbackBody {
  readonly request_id: string;
  readonly nonce: string;
  readonly decision: "approved" | "denied" | "approved_with_modifications";
  /** `once` (default), `session`, `{ "until": ISO-8601 }` or `{ "for": "10m" }`. */
  readonly scope?: unknown;
  readonly modifications?: Record<string, unknown>;
  readonly reason?: string;
  readonly approver_id?: string;
}

/** How long a callback client may take to send its body. */
export const CALLBACK_READ_TIMEOUT_MS = 10_000;

/** A callback body read whole, or why it was not. */
export type CallbackBody = { readonly bytes: Buffer } | { readonly error: "too_large" | "timeout" | "aborted" };

/**
 * Reads the request body's raw bytes. `too_large` as soon as it is announced (`Content-Length`) or found to be over
 * `MAX_CALLBACK_BYTES`, without reading the rest; `timeout` when it is not complete within `timeoutMs`.
 */
export function readBody(req: IncomingMessage, timers: ConsentTimers, timeoutMs: number): Promise<CallbackBody> {
  return new Promise((resolve) => {
    const announced = Number(req.headers["content-length"]);
    if (Number.isFinite(announced) && announced > MAX_CALLBACK_BYTES) {
      req.on("error", () => undefined);
      resolve({ error: "too_large" });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: CallbackBody): void => {
      timers.clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onFail);
      req.off("close", onClose);
      // a client that goes away after this must not become an unhandled stream error
      req.on("error", () => undefined);
      if ("error" in result) req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer | string): void => {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buffer.length;
      if (size > MAX_CALLBACK_BYTES) finish({ error: "too_large" });
      else chunks.push(buffer);
    };
    const onEnd = (): void => finish({ bytes: Buffer.concat(chunks) });
    const onFail = (): void => finish({ error: "aborted" });
    const onClose = (): void => {
      if (!req.complete) finish({ error: "aborted" });
    };
    const timer = timers.setTimeout(() => finish({ error: "timeout" }), timeoutMs);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onFail);
    req.on("close", onClose);
  });
}

/** The body as text, or null when it is not valid UTF-8. */
export function utf8Of(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Sends a small JSON answer; `close` ends the connection after it (a body left unread). */
export function reply(res: ServerResponse, status: number, body: Record<string, unknown>, close = false): void {
  if (res.headersSent) return;
  res.writeHead(status, { "Content-Type": "application/json", ...(close ? { Connection: "close" } : {}) });
  res.end(JSON.stringify(body));
}

function scopeOf(raw: unknown, now: Date): ApprovalScope | null | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw) && "for" in raw) {
    const text = raw.for;
    const ms = typeof text === "string" && Object.keys(raw).length === 1 ? parseApprovalDuration(text) : null;
    return ms === null ? null : { until: new Date(now.getTime() + ms).toISOString() };
  }
  return raw as ApprovalScope;
}

/** The longest `approver_id` taken (it is recorded in the signed response and shown in denials). */
const MAX_APPROVER_ID = 128;

function isApproverId(value: unknown): value is string {
  return typeof value === "string" && value !== "" && value.length <= MAX_APPROVER_ID && printable(value) === value;
}

/** Turns a parsed callback body into a checked answer, or a message saying what is wrong. */
export function answerFromCallback(body: unknown, now: Date): { answer: HumanAnswer } | { error: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { error: "the body is not an object" };
  const b = body as Partial<Record<keyof WebhookCallbackBody, unknown>>;
  const scope = scopeOf(b.scope, now);
  if (scope === null) return { error: "malformed scope" };
  const approver = b.approver_id;
  if (approver !== undefined && !isApproverId(approver)) {
    return { error: `approver_id must be 1–${MAX_APPROVER_ID} printable characters` };
  }
  // signed into the consent response and told to the agent: printable only, as approver_id (acp serve's rule)
  if (typeof b.reason === "string" && hasHiddenCharacters(b.reason)) {
    const shown = printable(b.reason.slice(0, 100));
    return {
      error:
        `reason: \`${shown}\` holds a control, invisible or bidirectional character (it is signed into the ` +
        "consent response and shown to the agent): use printable characters",
    };
  }
  const answer = {
    decision: b.decision,
    approverId: approver === undefined ? "webhook" : `webhook:${approver}`,
    ...(scope !== undefined ? { scope } : {}),
    ...(b.modifications !== undefined ? { modifications: b.modifications } : {}),
    ...(b.reason !== undefined ? { reason: b.reason } : {}),
  };
  const problem = checkHumanAnswer(answer, now);
  return problem === null ? { answer: answer as HumanAnswer } : { error: problem };
}
