import {
  createMemoryNonceStore,
  signResponseFor,
  verifyConsentProof,
  type ApprovedAction,
  type ConsentResponseV02 as CoreResponse,
  type NonceStore,
  type Redactor,
} from "@acp/core";
import { createConsentGrantStore, createPendingConsentStore, createSqliteNonceStore, currentOwner } from "@acp/store";
import {
  createCliChannel,
  createConsentBroker,
  PROXY_MAX_WAITING_PER_SESSION,
  createTerminalChannel,
  printable,
  restoreRedacted,
  type ConsentAgentInfo,
  type ConsentBrokerHandle,
  type ConsentChannel,
  type ConsentRequestV02,
  type ConsentResponseV02,
} from "@acp/proxy/consent";
import type { HomeState } from "./home-state.js";
import type { KeyHolder, SigningKey } from "./signing-key.js";

/**
 * The exact action a response approves: the real arguments (the request only shows them redacted) with the
 * person's modifications applied, a `[redacted]` left in an edit meaning "keep the original value".
 */
export function approvedActionFor(
  request: ConsentRequestV02,
  args: Readonly<Record<string, unknown>>,
  modifications: Record<string, unknown> | null,
  redact?: Redactor,
): ApprovedAction {
  const edited =
    modifications === null ? {} : (restoreRedacted(args, modifications, redact) as Record<string, unknown>);
  return {
    server: request.action.server,
    tool: request.action.tool,
    parameters: JSON.parse(JSON.stringify({ ...args, ...edited })) as ApprovedAction["parameters"],
  };
}

/** The broker's reason when no channel can put a request before a person (packages/proxy/src/consent/broker.ts). */
const NO_CHANNEL = "no consent channel is available";

/** Options of the wired broker. */
export interface WiredBrokerOptions {
  readonly state: HomeState;
  readonly key: SigningKey;
  readonly clock: () => Date;
  /** Channels beyond the defaults (terminal, then `acp approve` through state.db). */
  readonly channels?: readonly ConsentChannel[];
  /** Whether to offer the controlling terminal; false in tests and under `acp run`. */
  readonly terminal?: boolean;
  /** What hides secrets from the person asked (config.yml `redaction:` and the vault values in use). */
  readonly redact?: Redactor;
  /** Told once, at start, when approvals cannot be signed (no passphrase for the home's key). */
  readonly log?: (line: string) => void;
  /** The §4.1 agent of requests whose call names none (`acp run`: the command it started). */
  readonly agent?: ConsentAgentInfo;
  /** Who asks (`acp proxy`, `acp run`, the guard): a refusal for want of a home says what to restart. */
  readonly holder?: KeyHolder;
}

/**
 * The CLI channel, saying on the proxy's stderr (an MCP client's log) where a call waits when there is no
 * terminal to ask at: under a client, a call that asks otherwise only hangs, and the person reading the log
 * learns nothing of `acp pending`. Nothing is said when the terminal prompt shows the request itself.
 */
function announced(
  cli: ConsentChannel,
  terminal: ConsentChannel | undefined,
  log: (line: string) => void,
): ConsentChannel {
  return {
    ...cli,
    async deliver(delivery) {
      const answer = cli.deliver(delivery);
      if (terminal === undefined || !(await terminal.isAvailable())) {
        const { id, expires_at: until, action } = delivery.request;
        log(
          `\`${printable(action.tool)}\` on \`${printable(action.server)}\` waits for a person until ${until}: \`acp pending\`, then \`acp approve ${id}\` or \`acp deny ${id}\``,
        );
      }
      return answer;
    },
  };
}

/**
 * The consent broker as `acp proxy` runs it: the terminal (when there is one) and the CLI channel
 * (`acp pending|approve|deny` through `state.db`); every answer signed with the home's key and verified —
 * bound to the exact action, single use through the durable nonce store — before anything is forwarded.
 */
export function createWiredBroker(options: WiredBrokerOptions): ConsentBrokerHandle {
  const db = options.state.db();
  // the rows are this process's: if it dies while they wait, nobody reads their answers (acp pending)
  const store = db === null ? undefined : createPendingConsentStore(db, { owner: currentOwner() });
  // `--for` windows: every proxy of this home honours them until they end (a stdio client restarts its proxy)
  const grants = db === null ? undefined : createConsentGrantStore(db);
  const nonces: NonceStore = db === null ? createMemoryNonceStore() : createSqliteNonceStore(db);
  const channels: ConsentChannel[] = [...(options.channels ?? [])];
  const terminal = options.terminal !== false ? createTerminalChannel({ clock: options.clock }) : undefined;
  if (terminal !== undefined) channels.push(terminal);
  if (store !== undefined) {
    // the same spent-nonce table the verifier spends in: an answer read but not used is used up there too
    const spendNonce = (nonce: string, requestId: string, expiresAtMs: number): unknown =>
      nonces.spend(nonce, requestId, expiresAtMs);
    const cli = createCliChannel({ store, clock: options.clock, spendNonce });
    channels.push(options.log === undefined ? cli : announced(cli, terminal, options.log));
  }
  /** A stored window approval for this call: signed by this home's key for exactly this action (its nonce was spent by its first use). */
  async function verifyGrant(input: {
    response: ConsentResponseV02;
    request: ConsentRequestV02;
    arguments: Readonly<Record<string, unknown>>;
    now: Date;
  }): Promise<boolean> {
    const key = await options.key.get();
    const verdict = await verifyConsentProof(input.response, {
      expectedAction: approvedActionFor(input.request, input.arguments, input.response.modifications, options.redact),
      // the request stored beside it must be the one it answers: the audit names it as the approved request
      answers: input.request,
      trustedPublicKey: key.publicKeyHex,
      now: input.now,
      nonceStore: createMemoryNonceStore(),
    });
    return verdict.ok;
  }
  // an approval needs the home's key: without it nobody is asked (an approval would only fail after a
  // person gave it); said at start, and as the reason of every call that would ask
  const keyProblem = options.key.get().then(
    () => null,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  void keyProblem.then((problem) => {
    if (problem !== null) options.log?.(`approvals cannot be signed, so calls that ask are refused: ${problem}`);
  });
  const broker = createConsentBroker({
    channels,
    maxWaitingPerSession: PROXY_MAX_WAITING_PER_SESSION,
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    ...(options.redact !== undefined ? { redact: options.redact } : {}),
    ...(store !== undefined ? { store } : {}),
    ...(grants !== undefined ? { grants, verifyGrant } : {}),
    clock: options.clock,
    async sign({ response, request, arguments: args }) {
      const key = await options.key.get();
      const { reason: _reason, ...unsigned } = response;
      void _reason;
      const signed = signResponseFor(
        unsigned as Omit<CoreResponse, "proof">,
        approvedActionFor(request, args, response.modifications, options.redact),
        key,
      );
      return signed as unknown as ConsentResponseV02;
    },
    async verify({ response, request, arguments: args, now }) {
      const key = await options.key.get();
      const verdict = await verifyConsentProof(response, {
        expectedAction: approvedActionFor(request, args, response.modifications, options.redact),
        // the request showed redacted parameters: it binds the id, nonce and expiry (§6.3), not the action
        answers: request,
        trustedPublicKey: key.publicKeyHex,
        now,
        nonceStore: nonces,
      });
      return verdict.ok;
    },
  });
  return {
    async ask(request) {
      const problem = await keyProblem;
      if (problem !== null)
        return { kind: "denied", reason: `approvals cannot be signed, so nobody was asked: ${problem}` };
      const outcome = await broker.ask(request);
      // without a home there is no `acp pending` to answer from: a proxy started by an MCP client (no terminal)
      // then has nobody to ask, and the bare broker reason would not say what to do about it
      if (store === undefined && outcome.kind === "denied" && outcome.reason === NO_CHANNEL) {
        const reason = `${NO_CHANNEL}: no terminal to ask at, and no ACP home at \`${options.state.home}\` for \`acp pending\` and \`acp approve\` to answer from (run \`acp init\`, then ${options.holder === "guard" ? "open the guard again" : "start acp again"})`;
        options.log?.(`\`${printable(request.tool)}\` on \`${printable(request.server)}\` was refused: ${reason}`);
        return { kind: "denied", reason };
      }
      return outcome;
    },
    close: () => broker.close(),
  };
}
