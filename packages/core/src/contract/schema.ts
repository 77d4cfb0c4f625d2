/**
 * The canonical Agent Action Contract v1 JSON Schema, as a module the build can bundle.
 * The source of truth is `spec/schemas/agent-action-contract-v1.schema.json`; a test
 * (`test/contract/schema.test.ts`) keeps this copy identical to it.
 */

/** The v1 JSON Schema (draft 2020-12), `$id` `https://aana.dev/schemas/agent_action_contract_v1.schema.json`. */
export const CONTRACT_JSON_SCHEMA: { readonly [key: string]: unknown } = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://aana.dev/schemas/agent_action_contract_v1.schema.json",
  title: "AANA Agent Action Contract v1",
  description:
    "The seven-field pre-execution contract an agent runtime emits before a tool call. The gate answers accept, ask, defer or refuse; the tool executes only on accept. Unknown fields, enum values and schema versions fail closed.",
  type: "object",
  additionalProperties: false,
  required: [
    "tool_name",
    "tool_category",
    "authorization_state",
    "evidence_refs",
    "risk_domain",
    "proposed_arguments",
    "recommended_route",
  ],
  properties: {
    schema_version: {
      description:
        "Optional compatibility marker. The only negotiated value is aana.agent_tool_precheck.v1; any other value fails closed.",
      type: "string",
      const: "aana.agent_tool_precheck.v1",
    },
    tool_name: {
      description: "Exact tool/function name the agent intends to call.",
      type: "string",
      minLength: 1,
    },
    tool_category: {
      description: "Consequence class for the proposed tool call.",
      type: "string",
      enum: ["public_read", "private_read", "write", "unknown"],
    },
    authorization_state: {
      description:
        "Strongest verified authorization state known before execution (none < user_claimed < authenticated < validated < confirmed).",
      type: "string",
      enum: ["none", "user_claimed", "authenticated", "validated", "confirmed"],
    },
    evidence_refs: {
      description:
        "Redacted evidence used to classify the action, authorization and risk: non-empty strings (quickstarts) or structured refs (production).",
      type: "array",
      items: {
        if: {
          type: "string",
        },
        then: {
          type: "string",
          minLength: 1,
        },
        else: {
          $ref: "#/$defs/structured_evidence_ref",
        },
      },
    },
    risk_domain: {
      description: "Primary risk surface for the proposed action.",
      type: "string",
      enum: [
        "devops",
        "finance",
        "education",
        "hr",
        "legal",
        "pharma",
        "healthcare",
        "commerce",
        "customer_support",
        "security",
        "research",
        "personal_productivity",
        "public_information",
        "unknown",
      ],
    },
    proposed_arguments: {
      description: "Tool arguments the agent intends to pass. Redact secrets and private values where possible.",
      type: "object",
    },
    recommended_route: {
      description:
        "Runtime's proposed route before the gate applies final checks. The stricter of this and the inferred route wins.",
      type: "string",
      enum: ["accept", "ask", "defer", "refuse"],
    },
    request_id: {
      description: "Optional event/request id for audit correlation.",
      type: "string",
    },
    agent_id: {
      description: "Optional agent/runtime id.",
      type: "string",
    },
    user_intent: {
      description: "Optional short redacted summary of the user request that led to this tool call.",
      type: "string",
    },
    authorization_subject: {
      description: "Optional redacted subject whose authorization was checked.",
      type: "object",
      additionalProperties: false,
      properties: {
        subject_type: {
          type: "string",
          enum: ["user", "account", "client", "employee", "student", "patient", "case", "service", "unknown"],
        },
        subject_ref: {
          description: "Opaque or redacted subject reference.",
          type: "string",
        },
      },
    },
  },
  $defs: {
    structured_evidence_ref: {
      description: "A production evidence ref. Missing trust_tier, redaction_status or freshness are read as unknown.",
      type: "object",
      additionalProperties: false,
      required: ["source_id", "kind"],
      properties: {
        source_id: {
          description: "Opaque source or record reference.",
          type: "string",
          minLength: 1,
        },
        kind: {
          type: "string",
          enum: [
            "user_message",
            "assistant_message",
            "tool_result",
            "policy",
            "auth_event",
            "approval",
            "system_state",
            "audit_record",
            "other",
          ],
        },
        trust_tier: {
          type: "string",
          enum: ["verified", "runtime", "user_claimed", "unverified", "unknown"],
        },
        redaction_status: {
          type: "string",
          enum: ["public", "redacted", "sensitive", "unknown"],
        },
        summary: {
          description: "Short redacted summary of what this evidence establishes.",
          type: "string",
        },
        freshness: {
          type: "object",
          additionalProperties: false,
          required: ["status"],
          properties: {
            status: {
              type: "string",
              enum: ["fresh", "stale", "unknown"],
            },
          },
        },
        provenance: {
          description: "Redacted source label such as connector, policy, runtime or fixture.",
          type: "string",
        },
        retrieved_at: {
          description: "Optional ISO-8601 time the evidence was retrieved (informational).",
          type: "string",
        },
        citation_url: {
          description: "Optional public citation URL (informational).",
          type: "string",
        },
        retrieval_url: {
          description: "Optional retrieval URI (informational).",
          type: "string",
        },
        supports: {
          description: "Optional redacted claim/action ids this evidence supports (informational).",
          type: "array",
          items: {
            type: "string",
          },
        },
        contradicts: {
          description: "Optional redacted claim/action ids this evidence contradicts (informational).",
          type: "array",
          items: {
            type: "string",
          },
        },
      },
    },
  },
};
