import { fail, ok, type Issue, type Result } from "../issues/index.js";

/** Where a credential goes: a named tool-call argument, an HTTP header, or a spawned server's environment. */
export type CredentialTarget =
  | { readonly kind: "argument"; readonly name: string }
  | { readonly kind: "header"; readonly name: string }
  | { readonly kind: "env"; readonly name: string };

/** One configured injection: which vault entry, and where it goes. */
export interface CredentialInjection {
  /** The vault entry name. */
  readonly secret: string;
  readonly target: CredentialTarget;
}

/** The outcome of an injection: new arguments, and the vault entry names used (for the audit, by name only). */
export interface InjectedArguments {
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly injected: readonly string[];
}

const FORBIDDEN_NAMES = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Returns a copy of a tool call's arguments with the configured credentials put into their named
 * arguments; the input is never mutated. Only `argument` targets are applied here (headers and
 * environment variables belong to the transport). A missing vault entry is `credential_missing`;
 * errors name the entry, never a value. Call this only for a call whose decision is accept.
 */
export function injectCredentials(
  args: Readonly<Record<string, unknown>>,
  injections: readonly CredentialInjection[],
  secrets: Readonly<Record<string, string>>,
): Result<InjectedArguments> {
  const out: Record<string, unknown> = { ...args };
  const injected: string[] = [];
  const issues: Issue[] = [];
  for (const [i, inj] of injections.entries()) {
    if (inj.target.kind !== "argument") continue;
    if (FORBIDDEN_NAMES.has(inj.target.name) || inj.target.name.length === 0) {
      issues.push({
        code: "credential_target_invalid",
        path: [i, "target", "name"],
        message: `cannot inject into argument \`${inj.target.name}\``,
      });
      continue;
    }
    const value = Object.hasOwn(secrets, inj.secret) ? secrets[inj.secret] : undefined;
    if (value === undefined) {
      issues.push({ code: "credential_missing", path: [i, "secret"], message: `vault has no entry \`${inj.secret}\`` });
      continue;
    }
    Object.defineProperty(out, inj.target.name, { value, enumerable: true, writable: true, configurable: true });
    injected.push(inj.secret);
  }
  return issues.length > 0 ? fail(issues) : ok({ arguments: out, injected });
}
