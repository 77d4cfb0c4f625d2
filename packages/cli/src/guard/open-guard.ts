import { isExistingHome } from "@acp/store";
import { join } from "node:path";
import { compileIntent, formatIssue, type Category } from "@acp/core";
import { createApprovalMemory, newId } from "@acp/proxy/gate";
import { resolveHome, resolvePath, type CliIo } from "../context.js";
import { resolvePolicyPath } from "../wiring/policy-path.js";
import { readConfigFile } from "../wiring/config-file.js";
import { configInUse } from "../wiring/config-in-use.js";
import { createProxyWiring } from "../wiring/proxy-wiring.js";
import { createAnswerChannel, type AskPerson } from "./answer-channel.js";
import { auditLogProblem } from "./audit-reopen.js";
import { GuardRefusal } from "./guard-refusal.js";
import { callSignal } from "./call-signal.js";
import { checkGuardOptions, checkToolOptions } from "./guard-options.js";
import { runGuardedCall, type GuardedCallDeps } from "./guarded-call.js";
import { runGuardedStream, type StreamSource } from "./guarded-stream.js";

/** Options of {@link openGuard}; every one optional. */
export interface GuardOptions {
  /**
   * The ACP home (keys, policy, config, vault, audit, state); default `$ACP_HOME`, else `~/.acp`. Given
   * here, it must exist (`acp init`); the default may be missing: nothing is audited then (said on the log).
   */
  readonly home?: string;
  /** The policy file; default `<home>/policy.yml` (the built-in starter policy when the home has none). */
  readonly policy?: string;
  /** The config file (`credentials:`, `session:`, `redaction:`, channels); default `<home>/config.yml` when it exists. */
  readonly config?: string;
  /**
   * The intent the session runs under (an object as in `spec/schemas/intent.schema.json`), checked now;
   * default an open one: every action, provenance still judged.
   */
  readonly intent?: unknown;
  /**
   * Asks a person when the pipeline routes a call to ask or defer. Delivered with the home's configured
   * channels (`acp approve`, webhook, Telegram); the first answer wins and is signed with the home's key.
   * Without it, the configured channels only.
   */
  readonly ask?: AskPerson;
  /** Ask at the controlling terminal too (as `acp proxy` does); default false. */
  readonly terminal?: boolean;
  /** The agent's name in consent requests and audit events; default none. */
  readonly agent?: string;
  /** The server of tools guarded without one; default `local`. */
  readonly server?: string;
  /** Opens an encrypted home key (signing approvals, the vault); default `$ACP_PASSPHRASE`. */
  readonly passphrase?: string;
  /** Where warnings go, one line each; default stderr. */
  readonly log?: (line: string) => void;
  /** The clock; default the system's. */
  readonly now?: () => Date;
}

/** Options of one guarded tool. */
export interface GuardToolOptions {
  /** The server the tool belongs to (what policy rules and intent actions name: `server.tool`); default the guard's. */
  readonly server?: string;
  /**
   * The tool's category (`read`, `write`, `communication`, `financial`, …) as a request states its own: it
   * can make a decision stricter (a `settle` tool stated `financial` meets the rules for money), never
   * looser. To make a tool a read, classify it in the policy (`classify:`).
   */
  readonly category?: Category;
  /** The tool's results are the program's own word (a directory, a config read), not untrusted content; default false. */
  readonly trusted?: boolean;
  /**
   * For `guardStream` only: the fields of the object chunks whose strings are one text across chunks,
   * each as key names joined by dots, matched anywhere along a string's path with array positions left
   * out (`"delta.content"` is `choices[0].delta.content`). A vault value split between the chunks'
   * strings at such a field is hidden (a chunk whose string there could end in the start of one is held
   * back until the next shows it); a string at any other field is checked whole within its chunk only, and
   * never holds the stream back. A string or bytes chunk is text whatever the fields. Default: every field
   * is such a text (nothing split is missed, but a string that appears once, as a first chunk's
   * `role: "assistant"`, and could begin a secret holds the stream back to its end).
   */
  readonly textFields?: readonly string[];
}

/** An open guard: one session of the session runtime, one audit writer, one consent broker. */
export interface Guard {
  /**
   * Wraps `fn`, whose first parameter is the tool call's arguments (an object): every call is decided by
   * the one pipeline first and runs only when accepted or approved; otherwise the returned function
   * rejects with a {@link GuardRefusal}. Credentials configured for the tool are put into its arguments
   * after the decision and replaced in its result. The returned function has `fn`'s parameters: any
   * after the first (a framework's call options) are handed to `fn` as they are, and an abort signal in
   * any of them as `abortSignal` (Vercel AI SDK) or `signal` (LangChain) cancels the call: one already
   * aborted is not decided, one still waiting for a person is withdrawn (`stop: "withdrawn"`). Throws a `TypeError` at once for a tool name,
   * function or option that is not one.
   */
  guard<A extends object, R, O extends unknown[] = []>(
    tool: string,
    fn: (args: A, ...options: O) => R | Promise<R>,
    options?: GuardToolOptions,
  ): (args: A, ...options: O) => Promise<R>;
  /**
   * Wraps a streaming tool: `fn` returns an async iterable (an `async function*`, as the Vercel AI SDK's
   * `execute` may be), and so does the returned function, at once (the AI SDK checks for one). The call
   * is decided at the first read, which rejects with a {@link GuardRefusal} when it does not run; then
   * each chunk `fn` yields is checked before the caller sees it: a string is a piece of one text, whose
   * vault values are replaced even when split across pieces (the end of a piece that could begin one is
   * held back until the next); in object chunks, so are the strings at one place (every place, or the
   * `textFields` given), and anything else is checked whole as a result is. `tool_call_completed` is
   * recorded when the stream ends, fails, or is stopped (`return()`, which reaches `fn`'s iterator too).
   */
  guardStream<A extends object, C, O extends unknown[] = []>(
    tool: string,
    fn: (args: A, ...options: O) => StreamSource<C>,
    options?: GuardToolOptions,
  ): (args: A, ...options: O) => AsyncGenerator<C, void, undefined>;
  /**
   * Records again after the audit log stopped recording (a failed write: disk full, the file moved or
   * replaced), which makes every call refuse (`audit_failed`): verifies the home's log as `acp audit
   * verify` does (hashes, links, signed checkpoints, the anchor beside it) and, when it is sound, lets go of
   * the failed writer so the next call opens the log again. Rejects, and the guard keeps refusing, while
   * the log is missing or does not verify; rejects after `close()`. Resolves at once without a home.
   */
  reopen(): Promise<void>;
  /** Records what the person typed (trusted provenance: a value found here may be acted on). */
  user(text: string): void;
  /** The session's id, as audit events and `acp pending` name it. */
  readonly sessionId: string;
  /** The home in use. */
  readonly home: string;
  /**
   * Withdraws the calls still waiting for a person (they reject with `stop: "withdrawn"`), stops the streams
   * still open (their functions' iterators returned, their end recorded `cancelled`), waits for the
   * functions running, then closes the consent channels and the audit log (final signed checkpoint).
   */
  close(): Promise<void>;
}

/** The `CliIo` the wiring reads: the guard's home, passphrase, clock and log, and nothing from a terminal. */
function guardIo(options: GuardOptions, log: (line: string) => void): CliIo {
  const env: Record<string, string | undefined> = { ...process.env };
  if (options.home !== undefined) env["ACP_HOME"] = options.home;
  if (options.passphrase !== undefined) env["ACP_PASSPHRASE"] = options.passphrase;
  return {
    stdout: { write: () => true },
    stderr: { write: (chunk: string) => void chunk.split("\n").filter(Boolean).forEach(log) },
    readStdin: () => Promise.resolve(""),
    stdinIsTTY: false,
    env,
    cwd: process.cwd(),
    now: options.now ?? (() => new Date()),
  };
}

function checkedIntent(intent: unknown): unknown {
  if (intent === undefined) return undefined;
  const compiled = compileIntent(intent);
  if (!compiled.ok) throw new Error(`invalid intent:\n${compiled.issues.map((i) => formatIssue(i)).join("\n")}`);
  return intent;
}

/**
 * Opens the in-process guard over an ACP home: the same wiring as `acp proxy` — the policy, the home's
 * consent graph and the action contract with rate limits in `state.db`, the session runtime, the consent
 * broker (answers signed with the home's key and verified), the vault credentials of `credentials:`, and
 * the hash-chained audit log. Rejects when the policy, config or intent does not validate.
 */
export async function openGuard(options: GuardOptions = {}): Promise<Guard> {
  const opening = { close: (): Promise<void> => Promise.resolve() };
  try {
    checkGuardOptions(options);
    return openNow(options, opening);
  } catch (err) {
    // what was opened before the problem (state.db, channels) is let go; the problem is the answer
    await opening.close().catch(() => undefined);
    throw err;
  }
}

function openNow(options: GuardOptions, opening: { close: () => Promise<void> }): Guard {
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const io = guardIo(options, log);
  const home = resolveHome(io);
  if (options.home !== undefined && !isExistingHome(home)) {
    // a home named here that is not there is a mistake, not a wish to run without an audit
    throw new Error(
      `openGuard: no ACP home at \`${home}\`: run \`acp init\` with ACP_HOME=${home}, or leave out \`home\``,
    );
  }
  const configPath = options.config !== undefined ? resolvePath(io, options.config) : join(home, "config.yml");
  const config = configInUse(readConfigFile(configPath, options.config !== undefined));
  const intent = checkedIntent(options.intent);
  const wiring = createProxyWiring(
    { io, exitCode: 0 },
    {
      channels: options.ask !== undefined ? [createAnswerChannel(options.ask)] : [],
      terminal: options.terminal === true,
      name: "acp guard",
      holder: "guard",
    },
  );
  opening.close = () => wiring.close();
  const wired = { home, config };
  const policy = resolvePolicyPath(io, home, options.policy, config.file);
  const decide = wiring.createDecide({
    ...wired,
    policyPath: policy.path,
    policyIsDefault: policy.isDefault,
    ...(intent !== undefined ? { intent } : {}),
  });
  const audit = wiring.createAudit(wired);
  const running = new Set<Promise<unknown>>();
  const streams = new Set<AsyncGenerator<unknown, void, undefined>>();
  const closing = new AbortController();
  const now = io.now;
  const observer = wiring.createObserver?.(wired);
  const deps: GuardedCallDeps = {
    gate: {
      decide,
      ...(decide.recheckEdits !== undefined ? { recheckEdits: decide.recheckEdits } : {}),
      broker: wiring.createBroker(wired),
      audit,
      approvals: createApprovalMemory(),
      now,
      consentTimeoutMs: config.proxy.consentTimeoutMs,
      // a call let through is counted before its function runs: calls awaited together are judged with each
      // other counted, against the session's budgets and kill switch (a refused one does not run)
      ...(observer !== undefined ? { admit: (id, request) => observer.executed(id, request) } : {}),
    },
    audit,
    credentials: wiring.createCredentials?.(wired),
    observer,
    sessionId: newId("guard"),
    agent: options.agent,
    now,
    log: (line) => log(`acp guard: ${line}`),
    signal: closing.signal,
  };
  let closed = false;
  const defaultServer = options.server ?? "local";
  return {
    sessionId: deps.sessionId,
    home,
    guard(tool, fn, toolOptions = {}) {
      checkToolOptions(tool, fn, toolOptions, "call");
      const server = toolOptions.server ?? defaultServer;
      return (args, ...rest) => {
        if (closed) {
          const message = "refused: the guard is closed";
          return Promise.reject(new GuardRefusal({ stop: "guard_closed", message, server, tool }));
        }
        const cancel = callSignal(rest);
        const call = runGuardedCall(deps, {
          server,
          tool,
          ...(toolOptions.category !== undefined ? { category: toolOptions.category } : {}),
          trusted: toolOptions.trusted === true,
          arguments: args,
          run: (given) => fn(given, ...rest),
          signal: cancel.signal,
        });
        running.add(call);
        const done = (): void => {
          running.delete(call);
          cancel.release();
        };
        void call.then(done, done);
        return call;
      };
    },
    guardStream(tool, fn, toolOptions = {}) {
      checkToolOptions(tool, fn, toolOptions, "stream");
      const server = toolOptions.server ?? defaultServer;
      // taken now: the caller's array may change later, the fields may not
      const textFields = toolOptions.textFields !== undefined ? [...toolOptions.textFields] : undefined;
      return (args, ...rest) => {
        const cancel = callSignal(rest);
        const inner = runGuardedStream(
          deps,
          {
            server,
            tool,
            ...(toolOptions.category !== undefined ? { category: toolOptions.category } : {}),
            trusted: toolOptions.trusted === true,
            arguments: args,
            run: (given) => fn(given, ...rest),
            signal: cancel.signal,
          },
          textFields,
        );
        return (async function* tracked() {
          try {
            if (closed) {
              const message = "refused: the guard is closed";
              throw new GuardRefusal({ stop: "guard_closed", message, server, tool });
            }
            streams.add(inner);
            yield* inner;
          } finally {
            streams.delete(inner);
            cancel.release();
          }
        })();
      };
    },
    async reopen() {
      if (closed) throw new Error("reopen: the guard is closed: open a new one with `openGuard`");
      if (!isExistingHome(home)) return; // nothing is audited without a home
      const problem = await auditLogProblem(home);
      if (problem !== null) {
        throw new Error(`reopen: the audit log cannot be recorded to again: ${problem}; calls are still refused`);
      }
      await wiring.reopenAudit();
      deps.log(`the audit log \`${join(home, "audit.jsonl")}\` verifies: calls run again`);
    },
    user(text) {
      wiring.runtime()?.recordUserInput(deps.sessionId, text);
    },
    async close() {
      closed = true;
      closing.abort(); // calls waiting for a person are withdrawn (`withdrawn`); running functions finish
      // a stream nobody reads to its end is stopped, its end recorded before the log closes
      await Promise.allSettled([...running, ...[...streams].map((stream) => stream.return())]);
      await wiring.close();
    },
  };
}
