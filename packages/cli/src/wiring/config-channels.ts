import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import { basename } from "node:path";
import type { Document } from "yaml";
import type { Database } from "better-sqlite3";
import { checkConfigSecretSealed, createPendingConsentStore, ownerState, readConfigSecret } from "@acp/store";
import {
  answerPendingConsent,
  createTelegramChannel,
  createWebhookChannel,
  telegramChatIdWarning,
  webhookUrlWarning,
  type ConsentChannel,
  type HumanAnswer,
} from "@acp/proxy/consent";
import { CliError, EXIT } from "../exit-codes.js";
import { unknownKeyProblem, whereIn, type ConfigFile } from "./config-file.js";
import { webhookSecretProblem } from "./bearer-token.js";

/**
 * A channel opened on first use: its secret needs the home's key, which is unlocked only when a person
 * is first asked. A channel that cannot open says so (once) and counts as unavailable; a delivery that fails
 * says so too (the request goes on waiting on the other channels, so nothing else would tell).
 */
function lazyChannel(name: string, open: () => Promise<ConsentChannel>, log: (line: string) => void): ConsentChannel {
  let channel: Promise<ConsentChannel | null> | undefined;
  const get = (): Promise<ConsentChannel | null> =>
    (channel ??= open().catch((err: unknown) => {
      log(`the ${name} consent channel is unavailable: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }));
  return {
    name,
    async isAvailable() {
      const c = await get();
      return c !== null && (await c.isAvailable());
    },
    async deliver(delivery) {
      const c = await get();
      if (c === null) throw new Error(`the ${name} channel is unavailable`);
      try {
        return await c.deliver(delivery);
      } catch (err) {
        // the other channels keep waiting: say why the person on this one was not asked (not when the request
        // simply ended, which aborts every delivery)
        if (!delivery.signal.aborted) {
          const why = err instanceof Error ? err.message : String(err);
          log(`the ${name} consent channel could not deliver ${delivery.request.id}: ${why}`);
        }
        throw err;
      }
    },
    async settle(request, outcome, by) {
      const c = await get();
      await c?.settle?.(request, outcome, by);
    },
    async close() {
      if (channel === undefined) return;
      const c = await channel;
      await c?.close?.();
    },
  };
}

/** The values `channel:` takes (§8.1). */
const CHANNELS = ["prompt", "telegram", "webhook"];

/**
 * The keys of each channel's section, which of them must be set when that channel is chosen, and which hold a
 * secret that must be sealed (`acp config set-secret`).
 */
export const CHANNEL_SECTIONS = {
  telegram: { keys: ["bot_token", "chat_id", "api_root"], required: ["bot_token", "chat_id"], sealed: ["bot_token"] },
  webhook: {
    keys: ["url", "secret", "callback_listen", "callback_url"],
    required: ["url", "secret"],
    sealed: ["secret"],
  },
} as const;

const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== "";
const HTTP_URL = /^https?:\/\/[^\s/]+/;

/** What is wrong with one set value of a channel section, or null. */
function valueProblem(section: keyof typeof CHANNEL_SECTIONS, key: string, value: unknown): string | null {
  const name = `\`${section}.${key}\``;
  if (key === "chat_id") {
    return (typeof value === "number" && Number.isSafeInteger(value)) ||
      (typeof value === "string" && /^(-?\d{1,20}|@\w{5,32})$/.test(value))
      ? null
      : `${name} must be a chat id (a number, as a string) or @channelname`;
  }
  if (typeof value !== "string") return `${name} must be a string`;
  if (key === "url" || key === "api_root" || key === "callback_url") {
    return HTTP_URL.test(value) ? null : `${name} must be an http(s) URL, got \`${value}\``;
  }
  if (key === "callback_listen") {
    try {
      parseListen(value);
    } catch (err) {
      return (err as Error).message;
    }
  }
  return null;
}

/**
 * Checks `channel:` and the `telegram:` / `webhook:` sections of the config file `file`, every problem at
 * `FILE:LINE:COL` (exit 4): a misspelt channel or key must not quietly fall back to the terminal. Unknown keys
 * and malformed values are refused in either section, and so is a `webhook.callback_listen` on every address
 * without a `webhook.callback_url` (`wildcardCallbackProblem`); the chosen channel's own keys must be set, and
 * its secret sealed (`config_secret_plain`: its sealed secrets are opened only when a person is first asked,
 * too late to refuse a plain one).
 */
export function checkChannelKeys(file: ConfigFile): void {
  const values = file.values;
  const problems: string[] = [];
  const at = (path: readonly string[]): string => whereIn(file, path);
  const channel = values["channel"];
  const chosen = channel === undefined || channel === null || channel === "" ? "prompt" : channel;
  if (typeof chosen !== "string" || !CHANNELS.includes(chosen)) {
    problems.push(
      `${at(["channel"])}: \`channel\` must be one of ${CHANNELS.join(", ")}, got \`${typeof chosen === "string" ? chosen : JSON.stringify(chosen)}\``,
    );
  }
  for (const section of Object.keys(CHANNEL_SECTIONS) as (keyof typeof CHANNEL_SECTIONS)[]) {
    const { keys, required, sealed } = CHANNEL_SECTIONS[section];
    const raw = values[section];
    if (raw !== undefined && raw !== null && (typeof raw !== "object" || Array.isArray(raw))) {
      problems.push(`${at([section])}: \`${section}\` must be a mapping (${keys.join(", ")})`);
      continue;
    }
    const given = (raw ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(given)) {
      if (!(keys as readonly string[]).includes(key)) {
        problems.push(unknownKeyProblem(file, [section, key], keys));
      } else if (isSet(value)) {
        const problem = valueProblem(section, key, value);
        if (problem !== null) problems.push(`${at([section, key])}: ${problem}`);
      }
    }
    if (section === "webhook") {
      const wildcard = wildcardCallbackProblem(given["callback_listen"], given["callback_url"]);
      if (wildcard !== null) problems.push(`${at(["webhook", "callback_listen"])}: ${wildcard}`);
    }
    if (chosen !== section) continue;
    for (const key of required) {
      if (isSet(given[key])) continue;
      const how = (sealed as readonly string[]).includes(key) ? ` (acp config set-secret ${section}.${key})` : "";
      problems.push(`${at([section])}: \`channel: ${section}\` needs \`${section}.${key}\`${how}`);
    }
    for (const { key, message } of unsealedSecrets(file, section, sealed, given))
      problems.push(`${at([section, key])}: ${message}`);
  }
  if (problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
}

/**
 * The chosen channel's secrets written in plain text, which {@link checkChannelKeys} refuses. The secret is
 * opened only when a person is first asked (it needs the home's key): a plain one would pass the start and fail
 * then, every request left waiting on `acp pending`. Telling plain from sealed needs no key.
 */
function unsealedSecrets(
  file: ConfigFile,
  section: string,
  sealed: readonly string[],
  given: Readonly<Record<string, unknown>>,
): { key: string; message: string }[] {
  const out: { key: string; message: string }[] = [];
  for (const key of sealed) {
    // a value that is no string is said by the value check
    if (file.document === null || typeof given[key] !== "string") continue;
    const plain = checkConfigSecretSealed(file.document, `${section}.${key}`, basename(file.path));
    if (!plain.ok) out.push({ key, message: plain.issues[0]?.message ?? "not sealed" });
  }
  return out;
}

/**
 * The dotted paths (`telegram.bot_token`) of the chosen channel's plain secrets: what {@link checkChannelKeys}
 * refuses with where they are and what to run (`acp doctor` says each once, there).
 */
export function plainChannelSecrets(file: ConfigFile): string[] {
  const channel = file.values["channel"];
  if (typeof channel !== "string" || !Object.hasOwn(CHANNEL_SECTIONS, channel)) return [];
  const section = channel as keyof typeof CHANNEL_SECTIONS;
  const raw = file.values[section];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  return unsealedSecrets(file, section, CHANNEL_SECTIONS[section].sealed, raw as Record<string, unknown>).map(
    ({ key }) => `${section}.${key}`,
  );
}

/**
 * The consent channels the config file in use names (§8.1 `channel:`): `telegram` reads `telegram.bot_token`
 * (sealed with `acp config set-secret`), `telegram.chat_id` and optionally `telegram.api_root` (a
 * self-hosted Bot API). `webhook` reads `webhook.url`, `webhook.secret` (sealed), and where decisions
 * come back: `webhook.callback_listen` (`HOST:PORT`, default `127.0.0.1:0`) and `webhook.callback_url`
 * (what the receiver posts to; default the listener's own address). `prompt` needs nothing here (the
 * terminal is always offered). Sealed values open with the home's key (`seed`).
 */
export function configuredChannels(
  config: ConfigFile,
  seed: () => Promise<Uint8Array>,
  log: (line: string) => void,
  forward?: (requestId: string, answer: HumanAnswer, nonce?: string) => boolean | Promise<boolean>,
): ConsentChannel[] {
  const doc = config.document;
  if (doc === null) return [];
  const channel: unknown = doc.get("channel");
  if (channel === "webhook") {
    // requests (and Basic credentials) over plain HTTP to another machine: said when the config is read
    const url: unknown = doc.getIn(["webhook", "url"]);
    const plain = typeof url === "string" ? webhookUrlWarning(url) : null;
    if (plain !== null) log(`warning: ${plain} (${config.path})`);
    return [lazyChannel("webhook", () => openWebhook(doc, config.path, seed, log, forward), log)];
  }
  if (channel !== "telegram") return [];
  const chatId: unknown = doc.getIn(["telegram", "chat_id"]);
  const apiRoot: unknown = doc.getIn(["telegram", "api_root"]);
  // a chat named by `@username` goes to whoever holds the name: said when the config is read
  const warning = typeof chatId === "string" ? telegramChatIdWarning(chatId) : null;
  if (warning !== null) log(`warning: ${warning} (${config.path})`);
  const open = async (): Promise<ConsentChannel> => {
    if ((typeof chatId !== "string" && typeof chatId !== "number") || String(chatId) === "") {
      throw new Error(`\`telegram.chat_id\` is not set in ${config.path}`);
    }
    const token = readConfigSecret(doc, "telegram.bot_token", await seed(), config.path);
    if (!token.ok) throw new Error(token.issues[0]?.message ?? "cannot open `telegram.bot_token`");
    if (token.value === undefined)
      throw new Error(`\`telegram.bot_token\` is not set in ${config.path} (acp config set-secret telegram.bot_token)`);
    return createTelegramChannel({
      token: token.value,
      chatId,
      ...(typeof apiRoot === "string" && apiRoot !== "" ? { apiRoot } : {}),
      ...(forward !== undefined ? { forward } : {}),
    });
  };
  return [lazyChannel("telegram", open, log)];
}

/**
 * Where an answer for another proxy's request goes: every proxy of a home shares the Telegram bot (Telegram
 * hands each press to whichever of them polls) and a fixed webhook callback address (only one can listen), so
 * the answer is recorded in the home's pending table as `acp approve` / `acp deny` would record it, and the
 * proxy holding the request reads it there. A webhook callback's `nonce` must be the request's. False when the
 * table is not open, the request is not pending there (unknown, ended), its proxy is no longer running (as
 * `acp approve` refuses it: nobody would read the answer) or the nonce is another.
 */
export function pendingTableForward(
  state: { db(): Database | null },
  clock: () => Date,
): (requestId: string, answer: HumanAnswer, nonce?: string) => boolean {
  return (id, answer, nonce) => {
    const db = state.db();
    if (db === null) return false;
    const store = createPendingConsentStore(db);
    const row = store.get(id);
    if (nonce !== undefined && row?.nonce !== nonce) return false;
    // its proxy died while it waited: nobody would read the answer (the press is told it is no longer waiting)
    if (row !== null && ownerState(row.owner) === "gone") return false;
    const input = {
      id,
      decision: answer.decision === "denied" ? ("denied" as const) : ("approved" as const),
      approverId: answer.approverId,
      ...(answer.scope !== undefined ? { scope: answer.scope } : {}),
      ...(answer.modifications !== undefined ? { modifications: answer.modifications } : {}),
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      // the proxy holding the request reads it through its `cli` channel: the answer keeps the channel it came by
      ...(answer.channel !== undefined ? { channel: answer.channel } : {}),
    };
    return answerPendingConsent(store, input, clock()).ok;
  };
}

/**
 * A URL as logged: its origin only. Receivers often carry a secret in the URL (a token in the path or query,
 * user:password), and stderr ends up in a client's log files.
 */
function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    const rest = parsed.pathname !== "/" || parsed.search !== "" ? "/…" : "";
    return `${parsed.origin}${rest}`;
  } catch {
    return "(the configured url)";
  }
}

function parseListen(value: unknown): { host: string; port: number } {
  const text = typeof value === "string" && value !== "" ? value : "127.0.0.1:0";
  const match = /^(.+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match?.[1] === undefined || !(port >= 0 && port <= 65535)) {
    throw new Error(`\`webhook.callback_listen\` must be HOST:PORT, got \`${text}\``);
  }
  return { host: match[1].replace(/^\[|\]$/g, ""), port };
}

/** Whether `host` (brackets removed) is the any-address: 0.0.0.0, ::, or either written another way. */
function isWildcardHost(host: string): boolean {
  const kind = isIP(host);
  if (kind === 4) return host.split(".").every((octet) => Number(octet) === 0);
  if (kind !== 6) return false;
  // the URL parser writes an IPv6 address the one way: every zero form becomes `[::]`, a mapped 0.0.0.0 `[::ffff:0:0]`
  const normal = new URL(`http://[${host}]/`).hostname;
  return normal === "[::]" || normal === "[::ffff:0:0]";
}

/**
 * A `webhook.callback_listen` on every address (`0.0.0.0:PORT`, `[::]:PORT`) with no `webhook.callback_url`: the
 * default callback URL would be `http://0.0.0.0:PORT/…`, which no receiver on another machine can reach, so every
 * decision would be lost and each request expire as denied. Null when the listener is one address or a URL is given.
 */
export function wildcardCallbackProblem(listen: unknown, callbackUrl: unknown): string | null {
  if (isSet(callbackUrl) || typeof listen !== "string" || listen === "") return null;
  let parsed: { host: string; port: number };
  try {
    parsed = parseListen(listen);
  } catch {
    return null; // said by the value check
  }
  if (!isWildcardHost(parsed.host)) return null;
  const host = parsed.host.includes(":") ? `[${parsed.host}]` : parsed.host;
  return (
    `\`webhook.callback_listen\` \`${listen}\` listens on every address, so the receiver cannot reach the default ` +
    `callback URL (\`http://${host}:${parsed.port}/acp/consent\`): set \`webhook.callback_url\` to the URL it reaches this machine at ` +
    `(e.g. https://acp.example.com/acp/consent)`
  );
}

/**
 * The webhook channel with its callback endpoint: consent requests are POSTed (HMAC-signed) to
 * `webhook.url`; signed decisions come back to a listener this opens, whose URL each request carries.
 */
async function openWebhook(
  doc: Document,
  file: string,
  seed: () => Promise<Uint8Array>,
  log: (line: string) => void,
  forward?: (requestId: string, answer: HumanAnswer, nonce: string) => boolean | Promise<boolean>,
): Promise<ConsentChannel> {
  const url: unknown = doc.getIn(["webhook", "url"]);
  if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw new Error("`webhook.url` must be an http(s) URL");
  // checked with the config too (checkChannelKeys); said again here before anything opens
  const listenText: unknown = doc.getIn(["webhook", "callback_listen"]);
  const wildcard = wildcardCallbackProblem(listenText, doc.getIn(["webhook", "callback_url"]));
  if (wildcard !== null) throw new Error(wildcard);
  const secret = readConfigSecret(doc, "webhook.secret", await seed(), file);
  if (!secret.ok) throw new Error(secret.issues[0]?.message ?? "cannot open `webhook.secret`");
  if (secret.value === undefined)
    throw new Error(`\`webhook.secret\` is not set in ${file} (acp config set-secret webhook.secret)`);
  const short = webhookSecretProblem("`webhook.secret`", secret.value);
  if (short !== null) throw new Error(short);
  const listen = parseListen(listenText);
  const routes: { handle?: (req: IncomingMessage, res: ServerResponse) => Promise<void> } = {};
  // a client that trickles its headers is cut off after 10 s (Node's default is a minute); the channel itself
  // gives a body 10 s
  const limits = { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 };
  const server = createServer(limits, (req, res) => {
    if (routes.handle === undefined) return void res.writeHead(503).end();
    void routes.handle(req, res);
  });
  const bind = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(listen.port, listen.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  let listening = true;
  try {
    await bind();
  } catch (err) {
    // a fixed address another proxy of this home already listens on: that proxy takes the decisions for this
    // one's requests too and records them in state.db, where this proxy reads them (pendingTableForward)
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || listen.port === 0 || forward === undefined) throw err;
    listening = false;
  }
  /** Without the address, each request tries it again: the proxy that held it may have exited. */
  const takeOver = async (): Promise<void> => {
    if (listening) return;
    try {
      await bind();
      listening = true;
      log(`webhook consent channel: now listening on ${listen.host}:${listen.port} for decisions`);
    } catch {
      // still held: decisions keep coming back through the proxy that holds it
    }
  };
  const address = listening ? server.address() : null;
  const port = typeof address === "object" && address !== null ? address.port : listen.port;
  const given: unknown = doc.getIn(["webhook", "callback_url"]);
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  const callbackUrl = typeof given === "string" && given !== "" ? given : `http://${host}:${port}/acp/consent`;
  log(
    listening
      ? `webhook consent channel: requests go to ${originOf(url)}; decisions come back to ${callbackUrl}`
      : `webhook consent channel: requests go to ${originOf(url)}; ${listen.host}:${port} is in use (another acp proxy of this home?): decisions come back through it, by state.db`,
  );
  const channel = createWebhookChannel({
    url,
    secret: secret.value,
    clock: () => new Date(),
    callbackUrl,
    ...(forward !== undefined ? { forward } : {}),
  });
  routes.handle = (req, res) => channel.handleCallback(req, res);
  return {
    name: channel.name,
    isAvailable: () => channel.isAvailable(),
    async deliver(delivery) {
      await takeOver();
      return channel.deliver(delivery);
    },
    settle: (request, outcome) => channel.settle?.(request, outcome),
    async close() {
      await channel.close?.();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
