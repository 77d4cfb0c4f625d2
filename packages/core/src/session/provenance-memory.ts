/**
 * Provenance beyond one session. A session's store holds what was read in that session only, so an identifier
 * an agent read in untrusted content yesterday (an attacker's IBAN in an e-mail), still in the model's context
 * or memory today, would be `unknown` in a new session — accepted by default. A front end that keeps the
 * agent's later sessions (`acp proxy`, `acp run`: the home's `state.db`) gives the session a memory: every
 * identifier of an untrusted result is remembered, and a piece no entry of the session holds is judged
 * `tainted` when the memory still knows it (source `earlier-session:<server.tool#n>`). Trust still wins: a
 * value the user names in this session is trusted. The core does no I/O: the memory is a port.
 */

/** Where a front end keeps identifiers read in untrusted content, for the agent's later sessions. */
export interface ProvenanceMemory {
  /**
   * The untrusted source an identity (`kind:value`, the normal form of {@link extractValueTokens}) was read in,
   * in an earlier session or this one, while still remembered; undefined when it is not. Called while a call
   * is judged: a throw is the session source's error, and the call is refused.
   */
  recall(identity: string): string | undefined;
  /**
   * Remembers the identities of one untrusted result (`source`: `server.tool#n`). Called as the result is
   * recorded, before the session keeps it; a front end reports its own failures and does not throw (a throw
   * fails the recording).
   */
  remember(identities: readonly string[], source: string): void;
}

/** The prefix of an untrusted source that a {@link ProvenanceMemory} recalled: `earlier-session:mail.read#3`. */
export const EARLIER_SESSION = "earlier-session:";

/** The piece kinds a memory keeps: identifiers only, never whole argument values (`value`). */
export const REMEMBERED_KINDS: readonly string[] = ["email", "url", "host", "iban", "phone", "account"];

/** The identities of `tokens` (`kind:value`) a memory keeps. */
export function rememberedIdentities(tokens: Iterable<string>): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const kind = token.slice(0, token.indexOf(":"));
    if (REMEMBERED_KINDS.includes(kind)) out.push(token);
  }
  return out;
}
