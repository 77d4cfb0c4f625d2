/**
 * Recipients in tool-call arguments, and whether each is a VIP contact of the graph.
 * Anything that is not plainly a string of addresses counts as an unknown recipient.
 */

/** A recipient value that could not be read (an object, a number): never a VIP. */
export const UNREADABLE_RECIPIENT = "\u0000unreadable";

/**
 * The recipients an argument value names: a string (split at `,` and `;`) or a list of strings. Reading
 * stops once more than `limit` are found (the caller then knows there are too many, without the rest).
 */
export function recipientsAt(value: unknown, limit = Infinity): string[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? (value as unknown[]) : [value];
  const out: string[] = [];
  for (const item of items) {
    if (out.length > limit) break;
    if (typeof item !== "string") {
      out.push(UNREADABLE_RECIPIENT);
      continue;
    }
    const parts = /[^,;]+/g;
    for (let match = parts.exec(item); match !== null && out.length <= limit; match = parts.exec(item)) {
      const part = match[0].trim();
      if (part.length > 0) out.push(part);
    }
  }
  return out;
}

/**
 * Normalises an address for comparison: `Name <a@b>` → `a@b`, its ASCII letters lowercased (no other
 * letter is folded); a phone number keeps only its digits and a leading `+`.
 */
export function normalizeRecipient(value: string): string {
  const angle = /<([^<>]+)>\s*$/.exec(value);
  // ASCII letters only: a full Unicode lowercasing folds the Kelvin sign K (U+212A) into `k` and the dotted
  // I (U+0130) into `i` + a dot, making a different mailbox look like a VIP's
  const bare = (angle?.[1] ?? value).trim().replace(/[A-Z]/g, (c) => c.toLowerCase());
  if (/^[+\d\s().-]+$/.test(bare) && /\d/.test(bare)) {
    return (bare.startsWith("+") ? "+" : "") + bare.replace(/\D/g, "");
  }
  return bare;
}

/**
 * Most recipients one refinement reads: a call naming more is never "all VIPs" (a mass send is not a send to
 * a contact), and the check stays linear in the call, not in recipients × contacts.
 */
export const MAX_RECIPIENTS = 1_000;

const vipSets = new WeakMap<object, ReadonlySet<string>>();

/** The normalised VIP values, computed once per (frozen) contacts object. */
function vipSet(vipContacts: Readonly<Record<string, string>>): ReadonlySet<string> {
  let set = vipSets.get(vipContacts);
  if (set === undefined) {
    set = new Set(Object.values(vipContacts).map(normalizeRecipient));
    if (Object.isFrozen(vipContacts)) vipSets.set(vipContacts, set);
  }
  return set;
}

/** Whether a recipient is one of the VIP contacts' values (names are not accepted as recipients). */
export function isRecipientVip(recipient: string, vipContacts: Readonly<Record<string, string>>): boolean {
  if (recipient === UNREADABLE_RECIPIENT) return false;
  const wanted = normalizeRecipient(recipient);
  if (wanted.length === 0) return false;
  return vipSet(vipContacts).has(wanted);
}

/** Whether every recipient is a VIP: at least one, at most `MAX_RECIPIENTS`, none unreadable or unknown. */
export function allRecipientsVip(
  recipients: readonly string[],
  vipContacts: Readonly<Record<string, string>>,
): boolean {
  if (recipients.length === 0 || recipients.length > MAX_RECIPIENTS) return false;
  return recipients.every((r) => isRecipientVip(r, vipContacts));
}
