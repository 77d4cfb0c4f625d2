/**
 * The enforcement gate: authority tokens are issued only for calls the session would run (a person's
 * confirmation stands in for an `ask`), and `authorize` lets a call execute only with a valid token.
 */
import { canonicalSha256Ref, type JsonValue } from "../canonical-json/index.js";
import { validateActionRequest } from "../pipeline/index.js";
import type { ActionRequest } from "../request/index.js";
import { primaryActionName } from "./action-name.js";
import {
  signAuthorityToken,
  verifyAuthorityTokenSignature,
  type AuthorityToken,
  type AuthorityTokenClaims,
} from "./authority-token.js";
import type { SessionCode } from "./codes.js";
import type { QuestionDraft } from "./confirmations.js";
import type { Confirmation } from "./escalation.js";
import { judgeRequest, type SessionJudgment } from "./evaluate-session.js";
import { fitsPlanStep } from "./plan.js";
import type { SessionCore } from "./session-core.js";

/** What `authorize` answers. */
export type AuthorizeResult =
  | { readonly ok: true; readonly claims: AuthorityTokenClaims }
  | { readonly ok: false; readonly code: SessionCode; readonly message: string };

/** Options of `issueToken`. */
export interface IssueTokenOptions {
  /** The plan step the token is for; by default the first step the call fits. */
  readonly step?: number;
  /** A confirmation (kind `action`) for a call the session routes to ask. */
  readonly confirmation?: Confirmation;
}

/** Reads an untrusted request, or records and throws `invalid_record`. */
export function readRequest(core: SessionCore, value: unknown): ActionRequest {
  const checked = validateActionRequest(value);
  if (!checked.ok)
    return core.fail(
      "invalid_record",
      `invalid request: ${checked.issues.map((i) => i.message).join("; ")}`,
      checked.issues,
    );
  return checked.value;
}

/** The question for running one call the session routes to ask. */
export function actionDraft(core: SessionCore, request: ActionRequest, judgment: SessionJudgment): QuestionDraft {
  const ask = judgment.reasons.filter((r) => r.code !== "session_ok").map((r) => r.message);
  return {
    kind: "action",
    text: ask.join("; ") || `run \`${primaryActionName(request)}\``,
    subject: {
      kind: "action",
      tenant: core.deps.tenant,
      session: core.deps.id,
      intent_version: core.intent?.intent.version ?? null,
      plan_hash: core.plan?.hash ?? null,
      names: [...judgment.names],
      args_hash: canonicalSha256Ref(request.arguments),
    },
    details: {
      server: request.server ?? null,
      tool: request.tool,
      arguments: request.arguments as JsonValue,
      reasons: ask,
    },
  };
}

function chooseStep(
  core: SessionCore,
  request: ActionRequest,
  judgment: SessionJudgment,
  wanted: number | undefined,
): number | null {
  if (core.plan === null) return null;
  if (wanted === undefined) return judgment.step;
  if (!fitsPlanStep(core.plan, wanted, judgment.names, request.arguments)) {
    core.fail(
      "authority_refused",
      `no authority token: the call does not fit plan step ${wanted + 1}`,
      [],
      "token_refused",
    );
  }
  return wanted;
}

/** Issues a single-use token for one call, or records and throws why not. */
export function issueToken(core: SessionCore, value: unknown, options: IssueTokenOptions): AuthorityToken {
  const request = readRequest(core, value);
  const judgment = judgeRequest(core.view(), request);
  if (judgment.route === "refuse") {
    core.fail(
      "authority_refused",
      `no authority token: ${judgment.reasons[0]?.message ?? "refused"}`,
      [],
      "token_refused",
    );
  }
  const confirmed = judgment.route !== "accept";
  if (confirmed) {
    if (options.confirmation === undefined) {
      core.fail(
        "confirmation_required",
        `no authority token without a person: ${judgment.reasons[0]?.message ?? "ask"}`,
        [],
        "token_refused",
      );
    }
    const spent = core.desk.spend(options.confirmation, "action", actionDraft(core, request, judgment).subject);
    if (!spent.ok) core.fail(spent.code, `no authority token: ${spent.message}`, [], "token_refused");
  }
  const now = core.now().getTime();
  core.tokens.purgeExpired(now);
  const claims: AuthorityTokenClaims = {
    v: 1,
    id: core.randomId(),
    tenant: core.deps.tenant,
    session: core.deps.id,
    intent_version: core.intent?.intent.version ?? 0,
    plan_hash: core.plan?.hash ?? null,
    step: chooseStep(core, request, judgment, options.step),
    action: primaryActionName(request),
    args_hash: canonicalSha256Ref(request.arguments),
    issued_at: now,
    expires_at: now + core.settings.settings.token_ttl_seconds * 1000,
    confirmed,
  };
  core.tokens.add(claims);
  core.emit(
    "token_issued",
    `authority token ${claims.id} for \`${claims.action}\` (step ${claims.step === null ? "-" : claims.step + 1})`,
  );
  return signAuthorityToken(claims, core.deps.authorityKey);
}

function refuse(core: SessionCore, code: SessionCode, message: string): AuthorizeResult {
  core.emit("token_refused", message, code);
  return { ok: false, code, message };
}

function checkBinding(core: SessionCore, claims: AuthorityTokenClaims, nowMs: number): AuthorizeResult | undefined {
  if (claims.tenant !== core.deps.tenant)
    return refuse(core, "token_wrong_tenant", "the authority token belongs to another tenant");
  if (claims.session !== core.deps.id)
    return refuse(core, "token_wrong_session", "the authority token belongs to another session");
  if (nowMs >= claims.expires_at) return refuse(core, "token_expired", "the authority token has expired");
  const status = core.tokens.status(claims.id);
  if (status === undefined) return refuse(core, "token_unknown", "this session never issued the authority token");
  if (status === "used") return refuse(core, "token_reused", "the authority token was used already");
  if (status === "revoked") return refuse(core, "token_revoked", "the authority token was revoked");
  if (claims.intent_version !== core.intent?.intent.version || claims.plan_hash !== (core.plan?.hash ?? null)) {
    return refuse(core, "token_revoked", "the authority token was issued under another intent version or plan");
  }
  return undefined;
}

/**
 * The gate: checks shape, signature, tenant, session, lifetime, single use, revocation, action and argument
 * hash, then the session's current judgment (a call the session now refuses — or asks about, for a token issued
 * without a person — is refused). On success the token is spent and `admit` counts the call as executed.
 */
export function authorize(
  core: SessionCore,
  token: unknown,
  value: unknown,
  admit: (request: ActionRequest, judgment: SessionJudgment) => void,
): AuthorizeResult {
  const verified = verifyAuthorityTokenSignature(token, core.deps.authorityKey);
  if (!verified.ok) return refuse(core, verified.code, verified.message);
  const claims = verified.token;
  const now = core.now().getTime();
  const bound = checkBinding(core, claims, now);
  if (bound !== undefined) return bound;
  const checked = validateActionRequest(value);
  if (!checked.ok) return refuse(core, "invalid_record", "the request to authorize is malformed");
  const request = checked.value;
  if (primaryActionName(request) !== claims.action)
    return refuse(core, "token_wrong_action", `the authority token is for \`${claims.action}\``);
  if (canonicalSha256Ref(request.arguments) !== claims.args_hash) {
    return refuse(core, "token_wrong_arguments", "the arguments differ from those the authority token was issued for");
  }
  const judgment = judgeRequest(core.view(), request);
  const blocking = judgment.route === "refuse" || (judgment.route !== "accept" && !claims.confirmed);
  if (blocking) {
    const reason = judgment.reasons[0];
    return refuse(
      core,
      (reason?.code ?? "authority_refused") as SessionCode,
      `the session no longer allows the call: ${reason?.message ?? ""}`,
    );
  }
  core.tokens.markUsed(claims.id);
  core.tokens.purgeExpired(now);
  core.emit("token_authorized", `authority token ${claims.id} spent on \`${claims.action}\``);
  // the call runs now: counted now, so the calls authorized beside it are judged with it counted
  admit(request, judgment);
  return { ok: true, claims };
}
