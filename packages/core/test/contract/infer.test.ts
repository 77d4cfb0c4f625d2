import { describe, expect, it } from "vitest";
import {
  CONTRACT_AUTHORIZATION_STATES,
  CONTRACT_ROUTE_TABLE,
  CONTRACT_TOOL_CATEGORIES,
  checkToolPrecheck,
  inferContractRoute,
  type ContractAuthorizationState,
  type ContractEvent,
  type ContractToolCategory,
  type EvidenceRef,
} from "../../src/contract/index.js";
import { DOC, GOOD_REF } from "./fixtures.js";

/** The document's authorization table, written out by hand: what each category needs. */
const EXPECTED: Record<ContractToolCategory, Record<ContractAuthorizationState, string>> = {
  public_read: {
    none: "accept",
    user_claimed: "accept",
    authenticated: "accept",
    validated: "accept",
    confirmed: "accept",
  },
  private_read: {
    none: "defer",
    user_claimed: "defer",
    authenticated: "accept",
    validated: "accept",
    confirmed: "accept",
  },
  write: { none: "defer", user_claimed: "ask", authenticated: "ask", validated: "ask", confirmed: "accept" },
  unknown: {
    none: "refuse",
    user_claimed: "refuse",
    authenticated: "refuse",
    validated: "refuse",
    confirmed: "refuse",
  },
};

function event(
  category: ContractToolCategory,
  state: ContractAuthorizationState,
  refs: readonly EvidenceRef[] = [GOOD_REF],
): ContractEvent {
  return {
    tool_name: "tool_x",
    tool_category: category,
    authorization_state: state,
    evidence_refs: refs,
    risk_domain: "commerce",
    proposed_arguments: {},
    recommended_route: "accept",
  };
}

const cells = CONTRACT_TOOL_CATEGORIES.flatMap((c) => CONTRACT_AUTHORIZATION_STATES.map((s) => [c, s] as const));

describe("route inference: category × authorization state", () => {
  it.each(cells)("%s with %s routes as the document's table says", (category, state) => {
    const inference = inferContractRoute(event(category, state));
    expect(inference.route).toBe(EXPECTED[category][state]);
    expect(CONTRACT_ROUTE_TABLE[category][state]).toBe(EXPECTED[category][state]);
    expect(inference.cell).toBe(`${category}.${state}`);
    expect(inference.hard_blockers.length === 0).toBe(inference.route === "accept");
  });

  it("names the blocker of each non-accept cell", () => {
    expect(inferContractRoute(event("private_read", "user_claimed")).hard_blockers).toEqual([
      "missing_authorization_for_private_read",
    ]);
    expect(inferContractRoute(event("write", "none")).hard_blockers).toEqual(["missing_authorization_for_write"]);
    expect(inferContractRoute(event("write", "validated")).hard_blockers).toEqual(["missing_confirmation_for_write"]);
    expect(inferContractRoute(event("unknown", "confirmed")).hard_blockers).toEqual(["unknown_tool_category"]);
  });

  it("never lets authorization raise an unknown tool above refuse, whatever the evidence", () => {
    for (const state of CONTRACT_AUTHORIZATION_STATES) {
      expect(inferContractRoute(event("unknown", state, [GOOD_REF, "x"])).route).toBe("refuse");
    }
  });
});

describe("route inference: evidence", () => {
  const stale = { ...GOOD_REF, freshness: { status: "stale" } } as const;
  const unverified = { ...GOOD_REF, trust_tier: "unverified" } as const;
  const sensitive = { ...GOOD_REF, redaction_status: "sensitive" } as const;

  it("defers a confirmed write with no evidence, or only stale or unverified evidence", () => {
    for (const refs of [[], [stale], [unverified], [stale, unverified]]) {
      const inference = inferContractRoute(event("write", "confirmed", refs));
      expect(inference.route).toBe("defer");
      expect(inference.hard_blockers).toEqual(["insufficient_evidence"]);
    }
  });

  it("accepts a confirmed write once one ref counts, and says which refs did not", () => {
    const inference = inferContractRoute(event("write", "confirmed", [stale, GOOD_REF, unverified]));
    expect(inference.route).toBe("accept");
    expect(inference.reasons.map((r) => r.message)).toEqual([
      "the user explicitly confirmed this write",
      "stale evidence does not count: evidence_refs[0]",
      "unverified evidence does not count: evidence_refs[2]",
    ]);
  });

  it("counts a quickstart string ref like a structured ref of unknown trust and freshness", () => {
    expect(inferContractRoute(event("write", "confirmed", ["confirmation:1"])).route).toBe("accept");
    expect(inferContractRoute(event("write", "confirmed", [{ source_id: "s", kind: "other" }])).route).toBe("accept");
  });

  it("defers an authenticated private read without usable evidence (missing authentication and evidence)", () => {
    expect(inferContractRoute(event("private_read", "authenticated", [])).route).toBe("defer");
    const doc = inferContractRoute(DOC.privateReadMissingAuth);
    expect(doc.hard_blockers).toEqual(["missing_authorization_for_private_read", "insufficient_evidence"]);
  });

  it("accepts a public read with no evidence, as the document's example does", () => {
    expect(inferContractRoute(event("public_read", "none", [])).route).toBe("accept");
  });

  it("defers a public read whose evidence is marked sensitive: the evidence contradicts the classification", () => {
    const inference = inferContractRoute(event("public_read", "none", [sensitive]));
    expect(inference.route).toBe("defer");
    expect(inference.hard_blockers).toEqual(["sensitive_evidence_for_public_read"]);
  });

  it("only notes sensitive evidence on other categories", () => {
    const inference = inferContractRoute(event("private_read", "authenticated", [sensitive]));
    expect(inference.route).toBe("accept");
    expect(inference.reasons.map((r) => r.code)).toContain("sensitive_evidence_ref");
  });

  it("lists at most five indexes in a reason", () => {
    const inference = inferContractRoute(
      event(
        "public_read",
        "none",
        Array.from({ length: 8 }, () => stale),
      ),
    );
    expect(inference.reasons[1]?.message).toBe(
      "stale evidence does not count: evidence_refs[0], evidence_refs[1], evidence_refs[2], evidence_refs[3], evidence_refs[4] and 3 more",
    );
  });
});

describe("the runtime's route", () => {
  it.each(["ask", "defer", "refuse"] as const)("wins over an inferred accept when it is stricter (%s)", (runtime) => {
    const envelope = checkToolPrecheck({ ...DOC.publicRead, recommended_route: runtime });
    expect(envelope.architecture_decision).toMatchObject({
      route: runtime,
      inferred_route: "accept",
      runtime_route: runtime,
    });
    expect(envelope.hard_blockers).toEqual(["runtime_route_not_accept"]);
  });

  it("never loosens an inferred route (the document's write example with runtime accept asks)", () => {
    const envelope = checkToolPrecheck(DOC.writeMissingConfirmation);
    expect(envelope.architecture_decision).toMatchObject({
      route: "ask",
      inferred_route: "ask",
      runtime_route: "accept",
    });
  });

  it("keeps the inferred route when the runtime agrees on a non-accept route", () => {
    const envelope = checkToolPrecheck(DOC.unknownDestructive);
    expect(envelope.architecture_decision).toMatchObject({
      route: "refuse",
      inferred_route: "refuse",
      runtime_route: "refuse",
    });
    expect(envelope.hard_blockers).toEqual(["unknown_tool_category", "runtime_route_not_accept"]);
  });
});
