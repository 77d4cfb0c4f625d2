import { describe, expect, it } from "vitest";
import {
  CONTRACT_AUTHORIZATION_STATES,
  CONTRACT_JSON_SCHEMA,
  CONTRACT_REQUIRED_FIELDS,
  CONTRACT_RISK_DOMAINS,
  CONTRACT_SCHEMA_ID,
  CONTRACT_SCHEMA_VERSION,
  CONTRACT_TOOL_CATEGORIES,
  EVIDENCE_FRESHNESS_STATUSES,
  EVIDENCE_KINDS,
  EVIDENCE_REDACTION_STATUSES,
  EVIDENCE_TRUST_TIERS,
} from "../../src/contract/index.js";
import { ROUTES } from "../../src/route/index.js";
import { readRepoJson } from "./fixtures.js";

const file = readRepoJson("spec/schemas/agent-action-contract-v1.schema.json") as Record<string, unknown>;

interface Props {
  properties: Record<string, { enum?: unknown[]; const?: unknown; properties?: Props["properties"] }>;
  required: string[];
}

describe("the canonical JSON Schema", () => {
  it("is identical in spec/ and in the module core bundles", () => {
    expect(CONTRACT_JSON_SCHEMA).toEqual(file);
  });

  it("carries the public v1 id and the seven required fields in the frozen order", () => {
    expect(file["$id"]).toBe(CONTRACT_SCHEMA_ID);
    expect(file["required"]).toEqual([...CONTRACT_REQUIRED_FIELDS]);
    expect(file["additionalProperties"]).toBe(false);
  });

  it("uses exactly the enums the code knows", () => {
    const { properties } = file as unknown as Props;
    expect(properties["tool_category"]?.enum).toEqual([...CONTRACT_TOOL_CATEGORIES]);
    expect(properties["authorization_state"]?.enum).toEqual([...CONTRACT_AUTHORIZATION_STATES]);
    expect(properties["risk_domain"]?.enum).toEqual([...CONTRACT_RISK_DOMAINS]);
    expect(properties["recommended_route"]?.enum).toEqual([...ROUTES]);
    expect(properties["schema_version"]?.const).toBe(CONTRACT_SCHEMA_VERSION);
    const defs = file["$defs"] as Record<string, Props>;
    const ref = defs["structured_evidence_ref"]?.properties ?? {};
    expect(ref["kind"]?.enum).toEqual([...EVIDENCE_KINDS]);
    expect(ref["trust_tier"]?.enum).toEqual([...EVIDENCE_TRUST_TIERS]);
    expect(ref["redaction_status"]?.enum).toEqual([...EVIDENCE_REDACTION_STATUSES]);
    expect(ref["freshness"]?.properties?.["status"]?.enum).toEqual([...EVIDENCE_FRESHNESS_STATUSES]);
  });

  it("keeps schema_version optional", () => {
    expect(file["required"]).not.toContain("schema_version");
  });
});
