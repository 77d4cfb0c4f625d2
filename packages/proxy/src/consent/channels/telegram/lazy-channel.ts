import type {
  ChannelDelivery,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  HumanAnswer,
  SettledBy,
} from "../../types.js";
import type * as TelegramImplementation from "./telegram-channel.js";
import type { TelegramChannelOptions } from "./telegram-channel.js";

type Implementation = typeof TelegramImplementation;

let implementation: Promise<Implementation> | undefined;

/** The grammY channel's module, imported once, the first time a Telegram channel is created. */
const loadImplementation = (): Promise<Implementation> => (implementation ??= import("./telegram-channel.js"));

/**
 * The Telegram channel as the consent barrel hands it out: grammY (and the channel built on it) is imported only
 * when a Telegram channel is created — a guard or a proxy without one never loads it. Each call waits for the
 * import, then goes to the grammY channel in the order it was made (a `settle` made while a `deliver` waits for
 * the import reaches the channel after that `deliver` started, as it would without the wait). A failed import
 * fails every delivery (the request goes on waiting on the other channels, or is denied).
 */
class LazyTelegramChannel implements ConsentChannel {
  readonly name = "telegram";
  readonly #options: TelegramChannelOptions;
  readonly #inner: Promise<ConsentChannel>;

  constructor(options: TelegramChannelOptions) {
    this.#options = options;
    this.#inner = loadImplementation().then((m) => m.createTelegramChannel(options));
    // a failed import is reported by the calls that need the channel, not as an unhandled rejection
    this.#inner.catch(() => undefined);
  }

  isAvailable(): boolean {
    return this.#options.token !== "" && String(this.#options.chatId) !== "";
  }

  async deliver(delivery: ChannelDelivery): Promise<HumanAnswer> {
    return (await this.#inner).deliver(delivery);
  }

  async settle(request: ConsentRequestV02, outcome: ChannelSettlement, by?: SettledBy, reason?: string): Promise<void> {
    await (await this.#inner).settle?.(request, outcome, by, reason);
  }

  async close(): Promise<void> {
    const inner = await this.#inner.catch(() => undefined);
    await inner?.close?.();
  }
}

/**
 * The Telegram channel (grammY): sends each request with Approve / Approve for session / Deny buttons to one
 * chat, accepts button presses only from that chat, and edits the message when the request ends. grammY is
 * imported when the first such channel is created, not when the consent module is.
 */
export function createTelegramChannel(options: TelegramChannelOptions): ConsentChannel {
  return new LazyTelegramChannel(options);
}
