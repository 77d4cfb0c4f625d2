/**
 * Reasons can quote argument values (`text from … wants to send \`…\``): a channel must not show a secret
 * through them any more than through the arguments. Telegram, the terminal and `acp pending` show reasons.
 */
import { describe, expect, it } from "vitest";
import type { Reason } from "@acp/core";
import { DEFAULT_REDACTION } from "@acp/core";
import {
  createConsentRedactor,
  formatTelegramMessage,
  type ChannelDelivery,
  type ConsentChannel,
} from "../../src/consent/index.js";
import { ManualTime, askDecision, eventually, makeAsk, manualBroker } from "./fixtures.js";

const TOKEN = "sk-live-0123456789abcdefghijklmnop";
const VAULT = "correct-horse-vault-value";

describe("the reasons a channel shows", () => {
  it("pass the same redactor as the arguments (token-shaped text, vault values in use)", async () => {
    const deliveries: ChannelDelivery[] = [];
    const channel: ConsentChannel = {
      name: "probe",
      isAvailable: () => true,
      deliver: (delivery) => {
        deliveries.push(delivery);
        return new Promise(() => undefined);
      },
    };
    const time = new ManualTime();
    const broker = manualBroker([channel], time, { redact: createConsentRedactor(DEFAULT_REDACTION, () => [VAULT]) });
    const reasons: Reason[] = [
      { source: "session", code: "semantic", message: `text from \`web\` wants to send \`Bearer ${TOKEN}\`` },
      { source: "policy", code: "rule_matched", message: `body mentions ${VAULT}`, rule: "ask-writes" },
    ];
    const controller = new AbortController();
    const pending = broker.ask(makeAsk({ decision: askDecision({ reasons }), signal: controller.signal }));
    const delivery = await eventually(() => deliveries[0]);
    const shown = JSON.stringify(delivery.reasons) + formatTelegramMessage(delivery.request, delivery.reasons);
    expect(shown).not.toContain(TOKEN);
    expect(shown).not.toContain(VAULT);
    expect(shown).toContain("[redacted]");
    expect(delivery.reasons.map((r) => r.code)).toEqual(["semantic", "rule_matched"]);
    controller.abort();
    expect((await pending).kind).toBe("withdrawn");
  });
});
