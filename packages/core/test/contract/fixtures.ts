import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository root, from this test folder. */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** Reads a JSON file relative to the repository root. */
export function readRepoJson(path: string): unknown {
  return JSON.parse(readFileSync(`${repoRoot}${path}`, "utf8")) as unknown;
}

/** The document's four examples and its TypeScript SDK example, verbatim. */
export const DOC = {
  publicRead: {
    tool_name: "search_docs",
    tool_category: "public_read",
    authorization_state: "none",
    evidence_refs: [],
    risk_domain: "research",
    proposed_arguments: { query: "Agent Action Contract v1" },
    recommended_route: "accept",
  },
  writeMissingConfirmation: {
    tool_name: "send_email",
    tool_category: "write",
    authorization_state: "user_claimed",
    evidence_refs: ["draft_id:123"],
    risk_domain: "customer_support",
    proposed_arguments: { to: "customer@example.com" },
    recommended_route: "accept",
  },
  privateReadMissingAuth: {
    tool_name: "get_recent_transactions",
    tool_category: "private_read",
    authorization_state: "none",
    evidence_refs: [],
    risk_domain: "finance",
    proposed_arguments: { account_id: "acct_redacted", limit: 5 },
    recommended_route: "accept",
  },
  unknownDestructive: {
    tool_name: "delete_database",
    tool_category: "unknown",
    authorization_state: "none",
    evidence_refs: [],
    risk_domain: "unknown",
    proposed_arguments: { database: "prod" },
    recommended_route: "refuse",
  },
} as const;

/** A structured ref that counts for everything: verified, fresh, redacted. */
export const GOOD_REF = {
  source_id: "approval.1",
  kind: "approval",
  trust_tier: "verified",
  redaction_status: "redacted",
  freshness: { status: "fresh" },
  provenance: "runtime",
} as const;
