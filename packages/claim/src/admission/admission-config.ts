import { issuerKeys, type TrustedIssuer } from "./admission-token.js";
import type { ReputationEvent, ReputationOptions } from "./reputation.js";

/**
 * Admission policy modes:
 * - `pow`: anonymous admission with adaptive proof-of-work and in-memory behavioural throttling only;
 * - `pow+reputation` (default): the same, plus persistent per-source reputation in the claim store;
 * - `issuer-required`: every creation carries a valid admission token from a trusted issuer (and still solves
 *   the proof-of-work, at the token's lower difficulty); reputation applies.
 * In the PoW modes a token is optional and lowers the difficulty ("mixed" admission) when issuers are configured.
 */
export type AdmissionMode = "pow" | "pow+reputation" | "issuer-required";
export const ADMISSION_MODES: readonly AdmissionMode[] = ["pow", "pow+reputation", "issuer-required"];

/** Issuer and reputation admission settings (the `admission:` and `reputation:` sections of the claim config). */
export interface AdmissionPolicyOptions {
  readonly mode?: AdmissionMode;
  readonly issuers?: readonly TrustedIssuer[];
  /** Audiences tokens must name (default: the API origin as requested, e.g. `https://api.example.com`). */
  readonly audience?: readonly string[];
  /** Bits a valid token takes off the proof-of-work difficulty (default 4; never below 1 bit). */
  readonly tokenDiscountBits?: number;
  /** Tokens valid longer than this from now are refused (default 30 days). */
  readonly maxTokenLifetimeDays?: number;
  readonly reputation?: ReputationOptions;
}

/** One problem in a claim config. */
export interface ConfigIssue {
  readonly code: "claim_config_invalid";
  readonly path: string;
  readonly message: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Validates a parsed claim config document (`{admission?, reputation?}`); unknown keys are refused. Returns the
 * options or every issue found; never throws.
 */
export function parseAdmissionConfig(
  doc: unknown,
): { ok: true; value: AdmissionPolicyOptions } | { ok: false; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const bad = (path: string, message: string): void =>
    void issues.push({ code: "claim_config_invalid", path, message });
  const known = (o: Obj, path: string, keys: readonly string[]): void => {
    for (const k of Object.keys(o)) if (!keys.includes(k)) bad(`${path}${k}`, `unknown key \`${k}\``);
  };
  const num = (o: Obj, k: string, path: string, min: number, max: number): number | undefined => {
    const v = o[k];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
      bad(`${path}${k}`, `must be a number from ${min} to ${max}`);
      return undefined;
    }
    return v;
  };
  if (doc === null || doc === undefined) return { ok: true, value: {} };
  if (!isObj(doc)) return { ok: false, issues: [{ code: "claim_config_invalid", path: "", message: "not a mapping" }] };
  known(doc, "", ["admission", "reputation"]);
  const a = doc["admission"] ?? {};
  const r = doc["reputation"] ?? {};
  let out: AdmissionPolicyOptions = {};
  if (!isObj(a)) bad("admission", "must be a mapping");
  else {
    known(a, "admission.", ["mode", "issuers", "audience", "token_pow_discount_bits", "max_token_lifetime_days"]);
    const mode = a["mode"];
    if (mode !== undefined && !ADMISSION_MODES.includes(mode as AdmissionMode))
      bad("admission.mode", `unknown mode \`${JSON.stringify(mode)}\` (expected ${ADMISSION_MODES.join(", ")})`);
    const issuers = parseIssuers(a["issuers"], bad);
    const aud = a["audience"];
    const audience = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : undefined;
    if (aud !== undefined && (audience === undefined || !audience.every((x) => typeof x === "string" && x !== "")))
      bad("admission.audience", "must be a URL or a list of URLs");
    const discount = num(a, "token_pow_discount_bits", "admission.", 0, 27);
    const lifetime = num(a, "max_token_lifetime_days", "admission.", 0.001, 366);
    if (mode === "issuer-required" && issuers.length === 0)
      bad("admission.issuers", "mode `issuer-required` needs at least one trusted issuer");
    out = {
      ...(mode === undefined ? {} : { mode: mode as AdmissionMode }),
      issuers,
      ...(audience === undefined ? {} : { audience: audience as string[] }),
      ...(discount === undefined ? {} : { tokenDiscountBits: discount }),
      ...(lifetime === undefined ? {} : { maxTokenLifetimeDays: lifetime }),
    };
  }
  if (!isObj(r)) bad("reputation", "must be a mapping");
  else {
    known(r, "reputation.", ["half_life_hours", "raise_at", "refuse_at", "points"]);
    const p = r["points"] ?? {};
    const points: Partial<Record<ReputationEvent, number>> = {};
    if (!isObj(p)) bad("reputation.points", "must be a mapping");
    else {
      known(p, "reputation.points.", ["content_flagged", "lockout", "abandoned"]);
      for (const k of ["content_flagged", "lockout", "abandoned"] as const) {
        const v = num(p, k, "reputation.points.", 0, 1_000_000);
        if (v !== undefined) points[k] = v;
      }
    }
    const half = num(r, "half_life_hours", "reputation.", 0.01, 24 * 365);
    const raise = num(r, "raise_at", "reputation.", 0.001, 1e9);
    const refuse = num(r, "refuse_at", "reputation.", 0.001, 1e9);
    out = {
      ...out,
      reputation: {
        ...(half === undefined ? {} : { halfLifeHours: half }),
        ...(raise === undefined ? {} : { raiseAt: raise }),
        ...(refuse === undefined ? {} : { refuseAt: refuse }),
        points,
      },
    };
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: out };
}

function parseIssuers(v: unknown, bad: (path: string, message: string) => void): TrustedIssuer[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    bad("admission.issuers", "must be a list of {kid, public_key, name?}");
    return [];
  }
  const out: TrustedIssuer[] = [];
  v.forEach((i: unknown, n) => {
    const path = `admission.issuers[${n}]`;
    if (!isObj(i)) return bad(path, "must be a mapping {kid, public_key, name?}");
    for (const k of Object.keys(i))
      if (!["kid", "public_key", "name"].includes(k)) bad(`${path}.${k}`, `unknown key \`${k}\``);
    const { kid, public_key: publicKey, name } = i;
    if (typeof kid !== "string" || !/^[A-Za-z0-9_.:-]{1,128}$/.test(kid))
      return bad(`${path}.kid`, "must be 1–128 characters from [A-Za-z0-9_.:-]");
    if (typeof publicKey !== "string") return bad(`${path}.public_key`, "must be a string");
    if (name !== undefined && typeof name !== "string") return bad(`${path}.name`, "must be a string");
    const issuer: TrustedIssuer = { kid, publicKey, ...(typeof name === "string" ? { name } : {}) };
    try {
      issuerKeys([issuer]);
    } catch (err) {
      return bad(`${path}.public_key`, err instanceof Error ? err.message : String(err));
    }
    if (out.some((o) => o.kid === kid)) return bad(`${path}.kid`, `duplicate kid \`${kid}\``);
    out.push(issuer);
  });
  return out;
}
