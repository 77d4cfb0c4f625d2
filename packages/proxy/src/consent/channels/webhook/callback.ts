import type { IncomingMessage, ServerResponse } from "node:http";
import { parseApprovalDuration } from "../../scope.js";
import type { ApprovalScope, HumanAnswer } from "../../types.js";
import { checkHumanAnswer } from "../../response.js";

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

/** Reads the request body as UTF-8, or null when it is larger than `MAX_CALLBACK_BYTES`. */
export async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_CALLBACK_BYTES) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Sends a small JSON answer. */
export function reply(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  if (res.headersSent) return;
  res.writeHead(status, { "Content-Type": "application/json" });
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

/** Turns a parsed callback body into a checked answer, or a message saying what is wrong. */
export function answerFromCallback(body: unknown, now: Date): { answer: HumanAnswer } | { error: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { error: "the body is not an object" };
  const b = body as Partial<Record<keyof WebhookCallbackBody, unknown>>;
  const scope = scopeOf(b.scope, now);
  if (scope === null) return { error: "malformed scope" };
  const answer = {
    decision: b.decision,
    approverId: typeof b.approver_id === "string" && b.approver_id !== "" ? `webhook:${b.approver_id}` : "webhook",
    ...(scope !== undefined ? { scope } : {}),
    ...(b.modifications !== undefined ? { modifications: b.modifications } : {}),
    ...(b.reason !== undefined ? { reason: b.reason } : {}),
  };
  const problem = checkHumanAnswer(answer, now);
  return problem === null ? { answer: answer as HumanAnswer } : { error: problem };
}
