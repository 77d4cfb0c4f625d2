/**
 * The policy as it judges a caller whose `server` is only its own word: the anonymous agents' token, a
 * named agent without `serve.agent_servers`, a loopback caller without a token. Such a caller may name any
 * server, or none, so a rule for a server that denies or asks must hold whatever it names: the request is
 * matched as if it could be any server (docs/guides/serve.md, "Which server a request is for").
 */
import type { Policy, PolicyRule } from "@acp/core";

/** Whether a rule is one a caller could slip past by naming another server, or none. */
function heldByServerClaim(rule: PolicyRule): boolean {
  return rule.action !== "allow" && rule.match.server !== undefined;
}

/**
 * `policy` with the `server:` of every deny and ask rule dropped, so each applies to a request naming any
 * server or none; allow rules keep theirs (a claimed server can only earn what its rules allow, and a
 * deny or ask before them still holds). The same policy object when no rule changes.
 */
export function anyServerPolicy(policy: Policy): Policy {
  if (!policy.rules.some(heldByServerClaim)) return policy;
  return {
    ...policy,
    rules: policy.rules.map((rule): PolicyRule => {
      if (!heldByServerClaim(rule)) return rule;
      const match = { ...rule.match };
      delete match.server;
      return { ...rule, match };
    }),
  };
}
