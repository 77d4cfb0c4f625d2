import { createHash } from "node:crypto";
import { parse as parseYaml } from "yaml";
import {
  compileIntent,
  createSession,
  formatIssue,
  parseSessionSettings,
  sessionSource,
  type ActionRequest,
  type ClassificationOverride,
  type Issue,
  type SourceVerdict,
  yamlErrorText,
} from "@acp/core";
import { withHonestOk } from "../wiring/session-runtime.js";
import { resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readInputFile } from "../decision/read-input.js";
import { locateIssues } from "../intent/intent-file.js";
import type { ReplaySession, ReplaySessionFactory } from "./session-seam.js";

/** What a replay's sessions are built from, as read from files and flags. */
export interface ReplaySessionConfig {
  /** The intent every trace runs under; absent: every action allowed (provenance still judged). */
  readonly intent?: unknown;
  /** The intent of one trace (wins over `intent`), e.g. derived from that trace's user input. */
  readonly intentFor?: (traceName: string) => unknown;
  /** Session settings (`parseSessionSettings` form); `require_plan` defaults to false in a replay. */
  readonly settings?: Record<string, unknown>;
  /** Servers whose results are trusted (added to the settings' `trusted_servers`). */
  readonly trustedServers?: readonly string[];
  /** The policy's `classify:` overrides, so the session sees the same categories as the policy. */
  readonly classify?: readonly ClassificationOverride[];
  /** The clock every session reads. */
  readonly now: Date;
}

/** The intent a replay without `--intent` runs under: every action, provenance and transitions still judged. */
export const OPEN_INTENT = Object.freeze({ goal: "replay without an intent", allowed_actions: ["*", "**"] });

/** A fixed 32-byte key: replayed sessions issue no token anyone keeps. */
const REPLAY_KEY = new Uint8Array(createHash("sha256").update("acp replay").digest());

function seededRandom(seed: string): (size: number) => Uint8Array {
  let counter = 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let at = 0; at < size; at += 32) {
      const block = createHash("sha256").update(`${seed}\u0000${counter++}`).digest();
      out.set(block.subarray(0, Math.min(32, size - at)), at);
    }
    return out;
  };
}

function settingsFor(config: ReplaySessionConfig): Record<string, unknown> {
  const given = config.settings ?? {};
  const trusted = [...((given["trusted_servers"] as string[] | undefined) ?? []), ...(config.trustedServers ?? [])];
  const settings: Record<string, unknown> = { require_plan: false, ...given, trusted_servers: trusted };
  if (given["classify"] === undefined && config.classify !== undefined) settings["classify"] = [...config.classify];
  return settings;
}

/**
 * Builds a factory of fresh sessions of the `@acp/core` session runtime: each trace gets its own session,
 * with the intent set and started (no plan: a trace carries none), fed the trace's user input, tool results
 * and executed calls, and judged as the `session` source of the pipeline. Throws `invalid_session_config`
 * when the settings or intent do not validate (check them first with `checkReplaySessionConfig`).
 */
export function createReplaySessions(config: ReplaySessionConfig): ReplaySessionFactory {
  const settings = settingsFor(config);
  const intent = config.intent ?? OPEN_INTENT;
  const now = config.now;
  return (traceName) => {
    const session = createSession({
      now: () => now,
      random: seededRandom(traceName),
      authorityKey: REPLAY_KEY,
      settings,
    });
    const own = config.intentFor?.(traceName) ?? intent;
    session.setIntent(own);
    session.start();
    // "within the intent …" only when an intent was given: the stand-in open intent is nobody's
    const openHash = own === OPEN_INTENT ? session.intentHash : null;
    const source = sessionSource(session);
    const honest = (v: SourceVerdict | null): SourceVerdict | null =>
      v === null ? v : withHonestOk(v, session, openHash);
    const replay: ReplaySession = {
      sources: [
        {
          ...source,
          evaluate: (request: ActionRequest, now: Date) => {
            const verdict = source.evaluate(request, now);
            return verdict instanceof Promise ? verdict.then(honest) : honest(verdict);
          },
        },
      ],
      recordUserInput: (text) => void session.recordUserInput(text),
      recordToolResult: (server, tool, content, options) =>
        void session.recordToolResult(server, tool, content, options),
      recordExecution: (request) => session.recordExecution(request),
      provenance: () => session.provenance.map(({ source, label }) => ({ source, label })),
    };
    return replay;
  };
}

/** Every problem with the settings and intent of a replay, before any trace runs. */
export function checkReplaySessionConfig(config: ReplaySessionConfig): { settings: Issue[]; intent: Issue[] } {
  const settings = parseSessionSettings(settingsFor(config));
  const intent = config.intent === undefined ? { ok: true as const } : compileIntent(config.intent);
  return { settings: settings.ok ? [] : [...settings.issues], intent: intent.ok ? [] : [...intent.issues] };
}

async function readDocument(ctx: CliContext, file: string, what: string): Promise<{ text: string; value: unknown }> {
  const text = await readInputFile(resolvePath(ctx.io, file), what);
  try {
    return { text, value: parseYaml(text, { maxAliasCount: 100 }) as unknown };
  } catch (err) {
    throw new CliError(yamlErrorText(file, err, `invalid ${what}: not JSON or YAML`), EXIT.invalid);
  }
}

/** Where the sessions of `acp replay` come from: flags and files as typed. */
export interface ReplaySessionOptions {
  readonly intent?: string | undefined;
  readonly session?: string | undefined;
  readonly trustedServers: readonly string[];
  readonly classify: readonly ClassificationOverride[];
}

/**
 * Reads `--intent` and `--session-settings` (JSON or YAML), checks them, and builds the session factory. A missing
 * file exits 1; an invalid intent or settings file exits 4 listing every problem.
 */
export async function loadReplaySessions(
  ctx: CliContext,
  options: ReplaySessionOptions,
): Promise<ReplaySessionFactory> {
  const intentFile = options.intent === undefined ? undefined : await readDocument(ctx, options.intent, "intent");
  const sessionFile =
    options.session === undefined ? undefined : await readDocument(ctx, options.session, "session settings");
  const intent = intentFile?.value;
  const raw = sessionFile?.value;
  if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw))) {
    throw new CliError(`${options.session ?? ""}: invalid session settings: settings must be a mapping`, EXIT.invalid);
  }
  const config: ReplaySessionConfig = {
    ...(intent === undefined ? {} : { intent }),
    ...(raw === undefined ? {} : { settings: raw as Record<string, unknown> }),
    trustedServers: options.trustedServers,
    classify: options.classify,
    now: ctx.io.now(),
  };
  const problems = checkReplaySessionConfig(config);
  // each problem at the line and column of what it is about, as `acp intent set` prints them
  const where = (file: { text: string } | undefined, issues: Issue[]): Issue[] =>
    file === undefined ? issues : locateIssues(file.text, issues);
  const lines = [
    ...where(intentFile, problems.intent).map((i) => formatIssue(i, options.intent)),
    ...where(sessionFile, problems.settings).map((i) => formatIssue(i, options.session ?? "--trusted-server")),
  ];
  if (lines.length > 0) throw new CliError(`invalid intent or session settings:\n${lines.join("\n")}`, EXIT.invalid);
  return createReplaySessions(config);
}
