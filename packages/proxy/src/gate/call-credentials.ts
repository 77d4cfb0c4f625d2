import { redactSecrets } from "@acp/core";
import type { AuditSink, CredentialHook } from "./types.js";

/** Redact the known secret values only: a tool's own results are otherwise passed through unchanged. */
const ONLY_KNOWN_SECRETS = { keys: [], values: [] } as const;

/** The arguments to run an accepted call with, or why its credentials could not be put in (nothing runs). */
export type CredentialStep =
  | { readonly kind: "forward"; readonly arguments: Record<string, unknown>; readonly injected: readonly string[] }
  | {
      readonly kind: "refused";
      readonly message: string;
      /** What failed: the hook putting the credentials in, or the audit recording `credential_injected`. */
      readonly cause: "credentials" | "audit";
    };

/**
 * Puts the configured credentials into a call the decision accepted (never before), auditing
 * `credential_injected` per vault entry with `base` (the call's §7.4 fields). A failure (of the hook or the
 * audit) refuses the call: `message` says why and names no secret value. Without a hook the arguments go on unchanged. Shared by
 * `acp proxy`'s `tools/call` handler and the in-process guard.
 */
export async function injectCallCredentials(
  hook: CredentialHook | undefined,
  audit: AuditSink,
  call: {
    readonly server: string;
    readonly tool: string;
    readonly arguments: Record<string, unknown>;
    readonly base: Record<string, unknown>;
  },
): Promise<CredentialStep> {
  if (hook === undefined) return { kind: "forward", arguments: call.arguments, injected: [] };
  const refused = (cause: "credentials" | "audit", err: unknown): CredentialStep => ({
    kind: "refused",
    message: withoutSecretValues(hook, err instanceof Error ? err.message : String(err)),
    cause,
  });
  let out: Awaited<ReturnType<CredentialHook["inject"]>>;
  try {
    out = await hook.inject(call.server, call.tool, call.arguments);
  } catch (err) {
    return refused("credentials", err);
  }
  try {
    for (const name of out.injected) await audit.record("credential_injected", { ...call.base, credential: name });
  } catch (err) {
    return refused("audit", err);
  }
  return { kind: "forward", arguments: out.arguments, injected: out.injected };
}

/** `value` with every secret value the hook may have injected replaced, so the agent never sees one. */
export function withoutSecretValues<T>(hook: CredentialHook | undefined, value: T): T {
  if (hook === undefined) return value;
  const secrets = hook.secretValues();
  return secrets.length === 0 ? value : (redactSecrets(value, secrets, ONLY_KNOWN_SECRETS) as T);
}
