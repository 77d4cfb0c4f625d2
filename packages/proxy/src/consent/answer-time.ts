/**
 * When a person answered, as the response is stamped: a channel reports when it recorded the answer
 * (`HumanAnswer.answeredAtMs`), which can be a moment before the broker reads it — an answer given just before
 * the request expired and read just after still counts. The channel's time is trusted only between the
 * request's creation and the read: a time before the request, or after the read, is replaced by the read.
 */
import type { ConsentRequestV02 } from "./types.js";

/** The time to stamp an answer with: the channel's `answeredAtMs` when it lies in `[request created, readAt]`, else `readAt`. */
export function answeredAtOf(reportedMs: unknown, request: ConsentRequestV02, readAt: Date): Date {
  const created = Date.parse(request.timestamp);
  const read = readAt.getTime();
  if (typeof reportedMs !== "number" || !Number.isFinite(reportedMs)) return readAt;
  if (!Number.isFinite(created) || reportedMs < created || reportedMs > read) return readAt;
  return new Date(reportedMs);
}

/** Whether an answer stamped `answeredAt` came after its request expired (such an answer is not used). */
export function answeredTooLate(answeredAt: Date, request: ConsentRequestV02): boolean {
  const expires = Date.parse(request.expires_at);
  return !Number.isFinite(expires) || answeredAt.getTime() > expires;
}
