import type { ConsentBroker } from "./types.js";

/**
 * THE SEAM for consent channels: `acp proxy` asks a person through this broker. Until the consent
 * broker (terminal, CLI, webhook, Telegram) is wired in, every ask is denied with a clear reason
 * (fail closed). The integrator replaces this one function's body with the real broker.
 */
export function createDefaultBroker(): ConsentBroker {
  return {
    ask: () =>
      Promise.resolve({
        kind: "denied",
        reason: "no consent channel is wired into `acp proxy` yet, so nobody can approve this call",
      }),
  };
}
