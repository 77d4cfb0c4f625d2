import { parseApprovalDuration } from "../../scope.js";
import type {
  ChannelDelivery,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  HumanAnswer,
  SettledBy,
} from "../../types.js";
import {
  TERMINAL_PROMPT,
  formatRequestForTerminal,
  modificationsOf,
  parseTerminalCommand,
  printable,
  settledWords,
} from "./format.js";
import { LineReader } from "./line-reader.js";
import { openControllingTerminal, type TerminalStreams } from "./tty.js";

/** What the terminal channel needs; all optional. */
export interface TerminalChannelOptions {
  /** Opens the terminal; null means there is none. Default: the controlling terminal `/dev/tty`. */
  readonly open?: () => TerminalStreams | null;
  readonly clock?: () => Date;
  /** Recorded as the approver. Default `terminal`. */
  readonly approverId?: string;
}

interface Session {
  readonly streams: TerminalStreams;
  readonly lines: LineReader;
}

class TerminalChannel implements ConsentChannel {
  readonly name = "terminal";
  readonly #o: TerminalChannelOptions;
  #session: Session | null | undefined;
  /** One question at a time: each delivery waits for the one before it. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: TerminalChannelOptions) {
    this.#o = options;
  }

  isAvailable(): boolean {
    return this.#open() !== null;
  }

  deliver(delivery: ChannelDelivery): Promise<HumanAnswer> {
    const run = this.#queue.then(() => this.#ask(delivery));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  settle(request: ConsentRequestV02, outcome: ChannelSettlement, _by?: SettledBy, reason?: string): void {
    this.#session?.streams.output.write(`(${request.id}: ${settledWords(outcome, reason)})\n`);
  }

  close(): void {
    this.#session?.lines.close();
    this.#session?.streams.close();
    this.#session = null;
  }

  #open(): Session | null {
    if (this.#session !== undefined) return this.#session;
    const streams = (this.#o.open ?? openControllingTerminal)();
    this.#session = streams === null ? null : { streams, lines: new LineReader(streams.input) };
    return this.#session;
  }

  async #ask(delivery: ChannelDelivery): Promise<HumanAnswer> {
    const session = this.#open();
    if (session === null) throw new Error("no terminal is available");
    const { output } = session.streams;
    const { request, signal } = delivery;
    if (signal.aborted) throw new Error("the request closed before it was shown");
    session.lines.discardTyped();
    output.write(formatRequestForTerminal(request, delivery.reasons, (this.#o.clock ?? (() => new Date()))()));
    for (;;) {
      output.write(TERMINAL_PROMPT);
      const answer = await this.#interpret(session, delivery, await session.lines.next(signal));
      if (answer !== null) return answer;
    }
  }

  async #interpret(session: Session, delivery: ChannelDelivery, line: string): Promise<HumanAnswer | null> {
    const approverId = this.#o.approverId ?? "terminal";
    const { output } = session.streams;
    const command = parseTerminalCommand(line);
    // answered when the line was read: a window is counted from then too
    const now = (this.#o.clock ?? (() => new Date()))();
    const answeredAtMs = now.getTime();
    switch (command.kind) {
      case "approve":
        return { decision: "approved", scope: command.scope, approverId, answeredAtMs };
      case "deny": {
        const reason = command.reason !== undefined ? { reason: command.reason } : {};
        return { decision: "denied", approverId, ...reason, answeredAtMs };
      }
      case "window": {
        const ms = parseApprovalDuration(command.duration);
        if (ms === null) {
          output.write(`unknown duration \`${command.duration}\` (expected e.g. 90s, 10m, 2h, 1d; at most 7d)\n`);
          return null;
        }
        const until = new Date(now.getTime() + ms).toISOString();
        return { decision: "approved", scope: { until }, approverId, answeredAtMs };
      }
      case "edit":
        return this.#edit(session, delivery, approverId);
      case "unknown":
        output.write(`unrecognised answer \`${command.text}\`\n`);
        return null;
    }
  }

  async #edit(session: Session, delivery: ChannelDelivery, approverId: string): Promise<HumanAnswer | null> {
    const { output } = session.streams;
    const shown = delivery.request.action.parameters;
    // printable: still valid JSON of the same value (what it escapes occurs only inside strings), never raw
    output.write(
      `arguments as one line of JSON (secrets stay [redacted] and are kept):\n${printable(JSON.stringify(shown))}\n> `,
    );
    const line = await session.lines.next(delivery.signal);
    let edited: unknown;
    try {
      edited = JSON.parse(line);
    } catch {
      output.write("not valid JSON, nothing changed\n");
      return null;
    }
    if (typeof edited !== "object" || edited === null || Array.isArray(edited)) {
      output.write("the arguments must be a JSON object, nothing changed\n");
      return null;
    }
    const modifications = modificationsOf(shown, edited as Record<string, unknown>);
    const answeredAtMs = (this.#o.clock ?? (() => new Date()))().getTime();
    if (Object.keys(modifications).length === 0)
      return { decision: "approved", scope: "once", approverId, answeredAtMs };
    return { decision: "approved_with_modifications", modifications, scope: "once", approverId, answeredAtMs };
  }
}

/**
 * The terminal channel: prompts on the controlling terminal (never on stdin/stdout, which carry MCP), one
 * request at a time. Reports itself unavailable when there is no terminal, so the broker uses another channel.
 */
export function createTerminalChannel(options: TerminalChannelOptions = {}): ConsentChannel {
  return new TerminalChannel(options);
}
