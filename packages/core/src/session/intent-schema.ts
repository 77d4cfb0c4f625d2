/**
 * The intent JSON Schema as a module core bundles. The source of truth is
 * `spec/schemas/intent.schema.json`; a test keeps this copy identical to it.
 */

/** The intent JSON Schema (draft 2020-12), `$id` `https://acp.dev/schemas/intent.schema.json`. */
export const INTENT_JSON_SCHEMA: { readonly [key: string]: unknown } = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://acp.dev/schemas/intent.schema.json",
  title: "ACP session intent",
  description:
    "What the user wants done in one session: the actions it may take (globs over `server.tool` or `domain.action`), the actions it must never take, the actions that need a person's confirmation, the values the user named (trusted for provenance) and call budgets. Immutable once set; an update is a new version confirmed through the escalation handler. See docs/reference/session-runtime.md.",
  type: "object",
  additionalProperties: false,
  required: ["goal", "allowed_actions"],
  properties: {
    $schema: {
      type: "string",
    },
    version: {
      description: "Starts at 1; an update carries the current version plus one (or none, and the session assigns it).",
      type: "integer",
      minimum: 1,
      maximum: 1000000,
    },
    goal: {
      description: "The user's goal in their own words; shown to people in escalation questions.",
      type: "string",
      minLength: 1,
      maxLength: 4000,
    },
    allowed_actions: {
      description:
        "Globs over `server.tool` or `domain.action`; an action that matches none is refused (default deny).",
      $ref: "#/$defs/actionPatterns",
    },
    forbidden_actions: {
      description: "Globs; an action that matches one is refused, whatever else matches.",
      $ref: "#/$defs/actionPatterns",
    },
    confirm_actions: {
      description: "Globs; an allowed action that matches one is asked of a person each time.",
      $ref: "#/$defs/actionPatterns",
    },
    trusted_values: {
      description:
        "Named lists of values the user gave (recipients, accounts, …): trusted for provenance and usable by `from_trusted` plan constraints.",
      type: "object",
      maxProperties: 64,
      propertyNames: {
        pattern: "^[a-z][a-z0-9_]{0,63}$",
      },
      additionalProperties: {
        type: "array",
        maxItems: 1000,
        items: {
          type: "string",
          minLength: 1,
          maxLength: 1024,
        },
      },
    },
    budgets: {
      description: "Call budgets for the intent's lifetime (a new version starts them afresh).",
      type: "object",
      additionalProperties: false,
      properties: {
        max_calls: {
          $ref: "#/$defs/count",
        },
        max_consequential_calls: {
          $ref: "#/$defs/count",
        },
        per_action: {
          description: "Action glob to the most calls of matching actions.",
          type: "object",
          maxProperties: 256,
          propertyNames: {
            minLength: 1,
            maxLength: 1024,
          },
          additionalProperties: {
            $ref: "#/$defs/count",
          },
        },
      },
    },
  },
  $defs: {
    actionPatterns: {
      type: "array",
      maxItems: 1000,
      items: {
        type: "string",
        minLength: 1,
        maxLength: 1024,
      },
    },
    count: {
      type: "integer",
      minimum: 0,
      maximum: 1000000,
    },
  },
};
