import type { ActionRequest, Category } from "@acp/core";
// the gate's own entry, not the barrel: the guard loads neither the MCP SDK nor the proxy's servers
import {
  gateToolCall,
  injectCallCredentials,
  newId,
  withoutSecretValues,
  type AuditSink,
  type CallObserver,
  type CredentialHook,
  type GateDeps,
} from "@acp/proxy/gate";
import { REOPEN_HINT } from "./audit-reopen.js";
import { errorWithoutSecrets, messageOf } from "./error-secrets.js";
import { GuardRefusal, refusalOfVerdict } from "./guard-refusal.js";
import { checkResultSecrets } from "./result-secrets.js";
import { resultText } from "./result-text.js";

/** What every guarded call of one guard shares. */
export interface GuardedCallDeps {
  readonly gate: GateDeps;
  readonly audit: AuditSink;
  readonly credentials: CredentialHook | undefined;
  readonly observer: CallObserver | undefined;
  readonly sessionId: string;
  readonly agent: string | undefined;
  readonly now: () => Date;
  readonly log: (line: string) => void;
  /** Aborted when the guard closes: a call still waiting for a person is withdrawn. */
  readonly signal: AbortSignal;
}

/** One call of a guarded function. */
export interface GuardedCall<A, R> {
  readonly server: string;
  readonly tool: string;
  readonly category?: Category;
  /** The result is the caller's own word (`system_policy`), not untrusted content. */
  readonly trusted: boolean;
  readonly arguments: A;
  readonly run: (args: A) => R | Promise<R>;
  /** The caller's cancellation (a framework's abort signal): a call waiting for a person is withdrawn. */
  readonly signal?: AbortSignal | undefined;
}

/** Whether the caller has cancelled (read afresh each time: a signal aborts while the call is decided). */
const aborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/** The message of a call the audit log could not record: the audit's error, and what to do about it. */
const auditFailed = (err: unknown): string => `refused: ${messageOf(err)}; ${REOPEN_HINT}`;

/**
 * The sequence of `acp proxy`'s `tools/call` with a function where the upstream was: the gate (decide
 * with the one pipeline, ask a person for ask/defer, audit each step), `tool_call_forwarded`, the vault
 * credentials, the call, the result with every secret value replaced (an object as the copy made as it
 * was checked, never the one the function returned and may still change), `tool_call_completed`, and the
 * executed call and its result told to the session runtime (untrusted unless `trusted`). A call that
 * does not run throws a {@link GuardRefusal}; a failing audit write stops the call before it runs, and
 * after it ran withholds the result (`ran_unaudited`).
 */
export async function runGuardedCall<A extends object, R>(deps: GuardedCallDeps, call: GuardedCall<A, R>): Promise<R> {
  const admitted = await admitCall(deps, call);
  let result: R;
  try {
    result = await call.run(admitted.arguments);
  } catch (err) {
    throw await failedRun(deps, call, admitted, err);
  }
  const checked = checkResultSecrets(secretsOf(deps.credentials), result, true);
  if (checked.kind === "withheld") throw await withheld(deps, call, admitted, checked.why);
  observe(deps, admitted.call, call, checked.value);
  await recordCompleted(deps, call, { ...admitted.completed(), is_error: false });
  return checked.value;
}

/** A call the gate let through, its credentials put in: about to run. */
export interface AdmittedCall<A> {
  /** The arguments `fn` runs with (as approved, with the vault's values put in). */
  readonly arguments: A;
  /** The action request as decided (what the session runtime counted as it let the call through). */
  readonly request: ActionRequest;
  /** The call's `seq` in the session runtime (counted before it runs), which its result names. */
  readonly call: number | undefined;
  /** The fields of `tool_call_completed` so far (the call, its decision, how long it has run). */
  readonly completed: () => Record<string, unknown>;
}

/**
 * The steps of a call before its function runs: the gate (decide, ask, audit), `tool_call_forwarded`, the
 * vault credentials. Throws a {@link GuardRefusal} when the call must not run.
 */
export async function admitCall<A extends object>(
  deps: GuardedCallDeps,
  call: Omit<GuardedCall<A, unknown>, "run" | "trusted">,
): Promise<AdmittedCall<A>> {
  const { server, tool } = call;
  if (typeof call.arguments !== "object" || call.arguments === null || Array.isArray(call.arguments)) {
    const message = `refused: the arguments of \`${tool}\` are not an object of named arguments`;
    throw new GuardRefusal({ stop: "refused", message, server, tool });
  }
  if (aborted(call.signal)) {
    // cancelled before it was handed to the guard: nothing is decided, asked or run
    const message = "consent request withdrawn: the call was cancelled before it was decided";
    throw new GuardRefusal({ stop: "withdrawn", message, server, tool });
  }
  const callId = newId("call");
  const agent = deps.agent !== undefined ? { agent: deps.agent } : {};
  let verdict;
  try {
    verdict = await gateToolCall(deps.gate, {
      callId,
      server,
      tool,
      arguments: call.arguments as Record<string, unknown>,
      ...(call.category !== undefined ? { category: call.category } : {}),
      sessionId: deps.sessionId,
      ...agent,
      signal: call.signal !== undefined ? AbortSignal.any([deps.signal, call.signal]) : deps.signal,
    });
  } catch (err) {
    // the gate never throws but for the audit: a decision nobody can find afterwards does not let anything run
    throw new GuardRefusal({ stop: "audit_failed", message: auditFailed(err), server, tool });
  }
  if (verdict.kind === "answer") throw refusalOfVerdict(verdict, call);
  if (aborted(call.signal)) {
    // the caller gave up while the call was decided: it does not run (no `tool_call_forwarded`)
    const message = "consent request withdrawn: the call was cancelled before it ran";
    throw new GuardRefusal({ stop: "withdrawn", message, server, tool });
  }
  const base = { call_id: callId, session_id: deps.sessionId, server, tool, ...agent, ...verdict.decided };
  try {
    await deps.audit.record("tool_call_forwarded", { ...base, arguments: verdict.arguments });
  } catch (err) {
    throw new GuardRefusal({ stop: "audit_failed", message: auditFailed(err), server, tool });
  }
  const step = await injectCallCredentials(deps.credentials, deps.audit, {
    server,
    tool,
    arguments: verdict.arguments,
    base,
  });
  if (step.kind === "refused" && step.cause === "audit") {
    throw new GuardRefusal({ stop: "audit_failed", message: auditFailed(step.message), server, tool });
  }
  if (step.kind === "refused") {
    deps.log(`credentials for \`${tool}\` on \`${server}\` could not be injected: ${step.message}`);
    const message = `refused: the credentials for this call could not be injected: ${step.message}`;
    throw new GuardRefusal({ stop: "credentials_failed", message, server, tool });
  }
  const sentAt = deps.now().getTime();
  return {
    arguments: step.arguments as A,
    request: verdict.request,
    call: verdict.call,
    completed: () => ({ ...base, response_time_ms: Math.max(0, deps.now().getTime() - sentAt) }),
  };
}

/**
 * What a call whose function threw rejects with: the error recorded (`tool_call_completed`, `is_error`)
 * and told to the session runtime, then passed on without the secrets the function was given (in its
 * message, its cause, a response it holds), or `ran_unaudited` when it cannot be recorded.
 */
export async function failedRun(
  deps: GuardedCallDeps,
  call: { readonly server: string; readonly tool: string; readonly trusted: boolean },
  admitted: AdmittedCall<unknown>,
  err: unknown,
  extra: Record<string, unknown> = {},
): Promise<unknown> {
  const error = withoutSecretValues(deps.credentials, messageOf(err));
  observe(deps, admitted.call, call, error);
  await recordCompleted(deps, call, { ...admitted.completed(), ...extra, is_error: true, error });
  return errorWithoutSecrets(secretsOf(deps.credentials), err, error, (text) =>
    withoutSecretValues(deps.credentials, text),
  );
}

/**
 * The `result_withheld` refusal of a call that ran but whose result (`why`) cannot be checked, recorded
 * and told to the session runtime. It says first that the call ran, so that neither the model nor the
 * program takes it for one that did not and runs it again (a second payment).
 */
export async function withheld(
  deps: GuardedCallDeps,
  call: { readonly server: string; readonly tool: string; readonly trusted: boolean },
  admitted: AdmittedCall<unknown>,
  why: string,
  extra: Record<string, unknown> = {},
): Promise<GuardRefusal> {
  const { server, tool } = call;
  const message = `the call ran, but its result is withheld: ${why}, and the guard hides the vault's values in results (return plain data: strings, arrays, objects, Map, Set, Buffer)`;
  deps.log(`the result of \`${tool}\` on \`${server}\` is withheld: ${why}`);
  observe(deps, admitted.call, call, message);
  await recordCompleted(deps, call, { ...admitted.completed(), ...extra, is_error: true, error: message });
  return new GuardRefusal({ stop: "result_withheld", message, server, tool });
}

/**
 * Records `tool_call_completed`. The function has run: when the audit cannot record that, the caller is
 * not handed the audit's raw error (which reads like a call that did not happen, and invites a retry: a
 * second payment) nor the result (an effect nobody can find afterwards is not passed on as if all were
 * well), but a {@link GuardRefusal} `ran_unaudited` whose message says first that the call ran.
 */
export async function recordCompleted(
  deps: GuardedCallDeps,
  call: { readonly server: string; readonly tool: string },
  fields: Record<string, unknown>,
): Promise<void> {
  try {
    await deps.audit.record("tool_call_completed", fields);
  } catch (err) {
    const { server, tool } = call;
    deps.log(
      `\`${tool}\` on \`${server}\` ran, but could not be recorded in the audit log: ${messageOf(err)}; ${REOPEN_HINT}`,
    );
    const message = `the call ran, but it could not be recorded in the audit log (${messageOf(err)}), so its result is withheld: it must not be run again as if it had not run`;
    throw new GuardRefusal({ stop: "ran_unaudited", message, server, tool });
  }
}

export const secretsOf = (hook: CredentialHook | undefined): (() => readonly string[]) | undefined =>
  hook === undefined ? undefined : () => hook.secretValues();

/**
 * Tells the session runtime what came back, as text ({@link resultText}), naming the call it counted when the
 * gate let it through (`seq`: a stream's every chunk names its own call, whose note the first one reads, never
 * another call's of the same tool). A result it cannot be told whole is reported unreadable: the runtime then
 * judges as if it held anything.
 */
export function observe(
  deps: GuardedCallDeps,
  seq: number | undefined,
  call: { readonly server: string; readonly tool: string; readonly trusted: boolean },
  result: unknown,
): void {
  const observer = deps.observer;
  if (observer === undefined) return;
  try {
    const { text, unread } = resultText(result);
    const named = seq !== undefined ? { call: seq } : {};
    observer.result(deps.sessionId, call.server, call.tool, text, { trusted: call.trusted, ...named });
    if (unread !== undefined) unreadable(deps, call, unread);
  } catch (err) {
    unreadable(deps, call, messageOf(err));
  }
}

/** A result the runtime could not be told whole: logged, and reported so that it judges as if it held anything. */
function unreadable(
  deps: GuardedCallDeps,
  call: { readonly server: string; readonly tool: string },
  why: string,
): void {
  deps.log(`the session runtime could not record \`${call.tool}\` whole: ${why}`);
  try {
    deps.observer?.unreadable?.(deps.sessionId, call.server, call.tool, why);
  } catch (again) {
    deps.log(`the session runtime could not be told that \`${call.tool}\` went unrecorded: ${messageOf(again)}`);
  }
}
