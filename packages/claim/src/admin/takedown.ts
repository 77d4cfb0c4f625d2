import { isHandleShape } from "../ids/random-ids.js";
import type { ClaimStore, ReputationCharge } from "../store/claim-store.js";

/** The outcome of {@link takeDown}. */
export type TakedownResult =
  { readonly ok: true; readonly sandboxId: string } | { readonly ok: false; readonly reason: "not_found" | "claimed" };

/**
 * The handle a published URL (`https://{handle}.{pub suffix}/…`) or a bare handle names; undefined when neither.
 */
export function handleOf(urlOrHandle: string): string | undefined {
  const v = urlOrHandle.trim();
  if (isHandleShape(v)) return v;
  try {
    const label = new URL(v).hostname.split(".")[0] ?? "";
    return isHandleShape(label) ? label : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Rapid takedown by the operator (§23.2 "domain reputation damage: … rapid takedown"): the published sandbox
 * behind `handle` moves to `deleted` at once — content, credentials and handle gone, the handle tombstoned — and,
 * with `charge`, the range and issuer subject that created it are charged as for flagged content (§11.2).
 * A claimed sandbox is a workspace, outside the sandbox protocol: it is not touched (`claimed`).
 */
export async function takeDown(
  store: ClaimStore,
  handle: string,
  now: number,
  charge?: ReputationCharge,
): Promise<TakedownResult> {
  const s = await store.sandboxByHandle(handle, now);
  if (s === undefined) return { ok: false, reason: "not_found" };
  if (s.state === "claimed") return { ok: false, reason: "claimed" };
  if (!(await store.deleteSandbox(s.id, now))) return { ok: false, reason: "not_found" };
  if (charge !== undefined) await store.chargeReputation({ keys: [], sandboxId: s.id, charge, now });
  return { ok: true, sandboxId: s.id };
}
