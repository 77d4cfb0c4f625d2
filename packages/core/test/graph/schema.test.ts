import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parseConsentGraph } from "../../src/index.js";
import { EXAMPLE_GRAPH_TEXT } from "./example-graph.js";

const schema = JSON.parse(
  readFileSync(fileURLToPath(new URL("../../../../spec/schemas/consent-graph.schema.json", import.meta.url)), "utf8"),
) as object;
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);

const cases: [string, unknown][] = [
  ["the example", JSON.parse(EXAMPLE_GRAPH_TEXT)],
  ["a misspelt tier", { email: { autonomus: [] } }],
  ["a bad trust level", { email: { trust_level: "hgh" } }],
  ["a non-list tier", { email: { blocked: "x" } }],
  ["a bad decay action", { consent_decay: { enabled: true, review_interval_days: 30, decay_action: "nothing" } }],
  ["a zero interval", { consent_decay: { enabled: true, review_interval_days: 0 } }],
  ["a numeric vip contact", { vip_contacts: { a: 1 } }],
  ["a bad domain name", { "bad name": { autonomous: [] } }],
  ["a bad action name", { email: { autonomous: ["send mail"] } }],
  ["extras on any domain", { email: { require_diff: true, cooling_period_hours: 1, undo_window_days: 2 } }],
  ["a negative cooling period", { email: { cooling_period_hours: -1 } }],
];

describe("consent-graph.schema.json", () => {
  it.each(cases)("agrees with the parser on %s", (_name, raw) => {
    const parsed = parseConsentGraph(JSON.stringify(raw));
    expect(validate(raw)).toBe(parsed.ok);
  });

  it("accepts the document's example graph", () => {
    expect(validate(JSON.parse(EXAMPLE_GRAPH_TEXT))).toBe(true);
  });
});
