import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CredentialHook } from "@acp/proxy";
import { createConsentRedactor, type ConsentBrokerHandle, type ConsentChannel } from "@acp/proxy/consent";
import type { RedactionRules } from "@acp/core";
import type { CliContext } from "../context.js";
import type { ProxyWiring } from "../commands/proxy.js";
import { createHomeAuditSink, type ClosableAuditSink } from "./audit-sink.js";
import { createWiredBroker } from "./consent-broker.js";
import { createPipelineDecide } from "./decide.js";
import { openHomeState, type HomeState } from "./home-state.js";
import { homeSigningKey, type KeyHolder, type SigningKey } from "./signing-key.js";
import { createCredentialHook, credentialWarnings } from "./credentials.js";
import { createHomeProvenanceMemory } from "./session-memory.js";
import { configuredChannels, pendingTableForward } from "./config-channels.js";
import { homeConfigInUse, type ConfigInUse } from "./config-in-use.js";
import { createProxySessionRuntime, type ProxySessionRuntime } from "./session-runtime.js";
import { createHomeIntentSync } from "./session-home.js";
import { settleOrphanedConsent } from "./orphaned-consent.js";
import { homeSecretValues } from "./home-secrets.js";

/** What a front end other than `acp proxy` changes in the same wiring (the in-process guard). */
export interface ProxyWiringExtras {
  /** Consent channels asked before the configured ones (the guard's `ask` callback). */
  readonly channels?: readonly ConsentChannel[];
  /** Whether to offer the controlling terminal as a consent channel; default true. */
  readonly terminal?: boolean;
  /** What log lines start with; default `acp proxy`. */
  readonly name?: string;
  /** Who runs the wiring: what a missing passphrase's message says to do; default `proxy`. */
  readonly holder?: KeyHolder;
}

interface Wired {
  readonly state: HomeState;
  readonly key: SigningKey;
  readonly audit: ClosableAuditSink;
  readonly redaction: RedactionRules;
  readonly config: ConfigInUse;
}

/**
 * The real wiring of `acp proxy`: the one pipeline (policy, consent graph, action contract; rate limits in
 * state.db), the consent broker (terminal + `acp approve`, answers signed and verified, nonces spent
 * durably), and the hash-chained audit log with signed checkpoints. Without `$ACP_HOME` it still works —
 * the starter policy, an ephemeral key, memory state, no audit — and says so on stderr.
 *
 * Every config key (`redaction:`, `credentials:`, `session:`, `graph:`, the consent channel) comes from the config
 * file in use, read and checked once by the command (`config`, the first option that carries it); a caller
 * that passes none gets `$ACP_HOME/config.yml`'s. Secrets stay in the home: the vault and the home's key.
 */
export function createProxyWiring(
  ctx: CliContext,
  extras: ProxyWiringExtras = {},
): ProxyWiring & {
  close(): Promise<void>;
  runtime(): ProxySessionRuntime | undefined;
  /** The audit sink's {@link ClosableAuditSink.reopen}, once the audit is wired. */
  reopenAudit(): Promise<void>;
} {
  const log = (line: string): void => void ctx.io.stderr.write(`${extras.name ?? "acp proxy"}: ${line}\n`);
  let wired: Wired | undefined;
  let broker: ConsentBrokerHandle | undefined;
  let runtime: ProxySessionRuntime | undefined;
  let intentGiven = false;
  let orphansSettled: Promise<unknown> = Promise.resolve();
  // the vault values in use, once the credential hook has opened the vault: hidden from the audit and consent channels
  let credentials: CredentialHook | undefined;
  const secrets = (): readonly string[] => credentials?.secretValues() ?? [];
  const wire = (home: string, given: ConfigInUse | undefined): Wired => {
    if (wired !== undefined) return wired;
    // read and checked before anything opens: a bad key stops the command (exit 4)
    const config = given ?? homeConfigInUse(home);
    const state = openHomeState(home);
    if (!state.exists) log(`no ACP home at ${home}: nothing is audited and state is kept in memory (run \`acp init\`)`);
    // a home written by hand (a policy, no keys) signs with a key that lives as long as the process
    const hasKeys = state.exists && existsSync(join(home, "keys", "private.key"));
    const key = homeSigningKey(ctx.io, hasKeys ? home : null, log, extras.holder);
    const { redaction } = config;
    const audit = createHomeAuditSink({
      home: state.exists ? home : null,
      redaction,
      secrets,
      log,
      clock: ctx.io.now,
      signer: async () => {
        if (!hasKeys) return undefined;
        try {
          return (await key.get()).privateKey;
        } catch (err) {
          log(`audit checkpoints are not signed: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        }
      },
    });
    wired = { state, key, audit, redaction, config };
    return wired;
  };
  return {
    createDecide: ({ policyPath, policyIsDefault, home, intent, trustedServers, config: given }) => {
      intentGiven = intent !== undefined;
      const { state, audit, config } = wire(home, given);
      const path = policyPath ?? join(home, "policy.yml");
      return createPipelineDecide({
        state,
        policyPath: path,
        // as resolvePolicyPath said when it was asked (a file --policy or defaults.policy names is never replaced)
        policyIsDefault: policyIsDefault ?? (path === join(home, "policy.yml") && !existsSync(path)),
        graph: config.graph,
        now: ctx.io.now,
        log,
        // a reload of the policy file is in the chain before any decision on the new policy
        record: (eventType, fields) => audit.record(eventType, fields),
        // each agent's share of the policy work (proxy.caller_budget; absent: the default)
        ...(config.proxy.callerBudget !== undefined ? { callerBudget: config.proxy.callerBudget } : {}),
        sessions: (classify) => {
          runtime = createProxySessionRuntime({
            ...(intent !== undefined ? { intent } : {}),
            trustedServers: trustedServers ?? [],
            classify,
            settings: config.session,
            memory: createHomeProvenanceMemory({ state, settings: config.session, now: ctx.io.now, log }),
            now: ctx.io.now,
            broker: () => broker,
            intentSync: createHomeIntentSync({ state, audit, now: ctx.io.now, log }),
            // instructions read, provenance incomplete, suspended by the kill switch: in the chain, by session
            record: (eventType, fields) => audit.record(eventType, fields),
            log,
            // a plan or a resumption put to a person waits as any consent request does
            consentTimeoutMs: config.proxy.consentTimeoutMs,
          });
          return runtime;
        },
      });
    },
    createObserver: () => runtime?.observer,
    // offered only with an intent: a plan is checked against it (docs/guides/proxy.md)
    createPlans: () => (intentGiven ? runtime?.plans : undefined),
    createSecretValues: ({ home, config: given }) => {
      const { key, config } = wire(home, given);
      return homeSecretValues(home, config.file.values, () => key.seed());
    },
    createCredentials: ({ home, config: given }) => {
      const { key, config } = wire(home, given);
      for (const warning of credentialWarnings(config.credentials)) log(`warning: ${warning}`);
      credentials = createCredentialHook({ home, rules: config.credentials, seed: () => key.seed() });
      return credentials;
    },
    createBroker: ({ home, config: given, agent }) => {
      const { state, key, audit, redaction, config } = wire(home, given);
      // requests a killed proxy left waiting: nobody will read their answer (docs/reference/cli/pending.md)
      orphansSettled = settleOrphanedConsent({ db: state.db(), audit, now: ctx.io.now, log });
      broker = createWiredBroker({
        state,
        key,
        log,
        ...(agent !== undefined ? { agent } : {}),
        ...(extras.holder !== undefined ? { holder: extras.holder } : {}),
        redact: createConsentRedactor(redaction, secrets),
        clock: ctx.io.now,
        // sealed channel secrets open only with the home's key
        // a Telegram press on another proxy's request is recorded where that proxy reads answers
        channels: [
          ...(extras.channels ?? []),
          ...(state.exists
            ? configuredChannels(config.file, () => key.seed(), log, pendingTableForward(state, ctx.io.now))
            : []),
        ],
        ...(extras.terminal !== undefined ? { terminal: extras.terminal } : {}),
      });
      return broker;
    },
    createAudit: ({ home, config: given }) => wire(home, given).audit,
    runtime: () => runtime,
    reopenAudit: () => wired?.audit.reopen() ?? Promise.resolve(),
    async close() {
      // each part is let go of even when one before it fails (an audit log that stopped recording rejects
      // its close): the first failure is what close rejects with, after state.db is closed
      const w = wired;
      try {
        await orphansSettled;
        await broker?.close();
      } finally {
        try {
          await w?.audit.close();
        } finally {
          w?.state.close();
        }
      }
    },
  };
}
