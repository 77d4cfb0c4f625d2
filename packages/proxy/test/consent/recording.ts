import type { ConsentChannel, ConsentRequestV02 } from "../../src/consent/index.js";

/** Wraps a channel and records every request delivered through it (what the harness needs to know the nonce). */
export function recordDeliveries(channel: ConsentChannel): { channel: ConsentChannel; requests: ConsentRequestV02[] } {
  const requests: ConsentRequestV02[] = [];
  const wrapped: ConsentChannel = {
    name: channel.name,
    isAvailable: () => channel.isAvailable(),
    deliver: (delivery) => {
      requests.push(delivery.request);
      return channel.deliver(delivery);
    },
    settle: (request, outcome, by, reason) => channel.settle?.(request, outcome, by, reason),
    close: () => channel.close?.(),
  };
  return { channel: wrapped, requests };
}
