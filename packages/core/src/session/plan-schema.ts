/**
 * The plan JSON Schema as a module core bundles. The source of truth is
 * `spec/schemas/plan.schema.json`; a test keeps this copy identical to it.
 */

/** The plan JSON Schema (draft 2020-12), `$id` `https://acp.dev/schemas/plan.schema.json`. */
export const PLAN_JSON_SCHEMA: { readonly [key: string]: unknown } = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://acp.dev/schemas/plan.schema.json",
  title: "ACP session plan",
  description:
    "The ordered steps an agent proposes before acting: each names one concrete action (`server.tool` or `domain.action`) and may constrain its arguments. Validated against the intent, deep-frozen and hashed (`sha256:` of its RFC 8785 form); a change needs a person's confirmation. See docs/reference/session-runtime.md.",
  type: "object",
  additionalProperties: false,
  required: ["steps"],
  properties: {
    $schema: {
      type: "string",
    },
    intent_version: {
      description: "The intent version the plan was made for; when given it must be the current one.",
      type: "integer",
      minimum: 1,
      maximum: 1000000,
    },
    steps: {
      type: "array",
      minItems: 1,
      maxItems: 1000,
      items: {
        $ref: "#/$defs/step",
      },
    },
  },
  $defs: {
    step: {
      type: "object",
      additionalProperties: false,
      required: ["action"],
      properties: {
        action: {
          type: "string",
          minLength: 1,
          maxLength: 1024,
        },
        description: {
          type: "string",
          maxLength: 4000,
        },
        constraints: {
          description: "Top-level argument name to a constraint; an array argument must satisfy it element by element.",
          type: "object",
          maxProperties: 256,
          propertyNames: {
            minLength: 1,
            maxLength: 256,
          },
          additionalProperties: {
            $ref: "#/$defs/constraint",
          },
        },
      },
    },
    constraint: {
      oneOf: [
        {
          type: "object",
          additionalProperties: false,
          required: ["exact"],
          properties: {
            exact: true,
          },
        },
        {
          type: "object",
          additionalProperties: false,
          required: ["glob"],
          properties: {
            glob: {
              type: "string",
              minLength: 1,
              maxLength: 1024,
            },
          },
        },
        {
          type: "object",
          additionalProperties: false,
          required: ["one_of"],
          properties: {
            one_of: {
              type: "array",
              minItems: 1,
              maxItems: 1000,
            },
          },
        },
        {
          type: "object",
          additionalProperties: false,
          required: ["from_trusted"],
          properties: {
            from_trusted: {
              type: "string",
              pattern: "^[a-z][a-z0-9_]{0,63}$",
            },
          },
        },
      ],
    },
  },
};
