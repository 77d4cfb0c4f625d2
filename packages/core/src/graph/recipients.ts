/**
 * Recipients in tool-call arguments, and whether each is a VIP contact of the graph.
 * Anything that is not plainly a string of addresses counts as an unknown recipient.
 */

/** A recipient value that could not be read (an object, a number): never a VIP. */
export const UNREADABLE_RECIPIENT = "\u0000unreadable";

/** The recipients an argument value names: a string (split at `,` and `;`) or a list of strings. */
export function recipientsAt(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? (value as unknown[]) : [value];
  return items.flatMap((item) => {
    if (typeof item !== "string") return [UNREADABLE_RECIPIENT];
    return item
      .split(/[,;]/)
      .map((part) => part.trim())
      .filter((part) => part.length > 0);
  });
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

/** Whether a recipient is one of the VIP contacts' values (names are not accepted as recipients). */
export function isRecipientVip(recipient: string, vipContacts: Readonly<Record<string, string>>): boolean {
  if (recipient === UNREADABLE_RECIPIENT) return false;
  const wanted = normalizeRecipient(recipient);
  if (wanted.length === 0) return false;
  return Object.values(vipContacts).some((value) => normalizeRecipient(value) === wanted);
}
