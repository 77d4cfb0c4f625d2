import { compileGlob, injectCredentials, suggest, type CredentialInjection, type GlobMatcher } from "@acp/core";
import { readVault } from "@acp/store";
import type { CredentialHook, UpstreamCredentials, UpstreamSpec } from "@acp/proxy";
import { CliError, EXIT } from "../exit-codes.js";
import type { ConfigLocator } from "./config-file.js";

/** Where one `credentials:` entry puts its vault value. */
export type CredentialPlacement =
  | { readonly kind: "argument"; readonly name: string; readonly tool: GlobMatcher }
  | { readonly kind: "header"; readonly name: string; readonly format: string }
  | { readonly kind: "env"; readonly name: string };

/** One `credentials:` entry of the config file: which vault entry goes where, for which servers. */
export interface CredentialRule {
  readonly secret: string;
  readonly server: GlobMatcher;
  readonly place: CredentialPlacement;
  /** `credentials.<i>` in the config file, for messages. */
  readonly where: string;
  /** Where the entry is: `FILE:LINE:COL` (or the file's name), for errors that stop a start. */
  readonly at?: string;
  /** The entry names no `server`: it goes to every upstream (see {@link credentialWarnings}). */
  readonly anyServer?: true;
}

const KEYS = ["secret", "server", "tool", "argument", "inject"];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Headers the transport owns: a credential must not replace them. */
const RESERVED_HEADERS = new Set([
  "content-type",
  "content-length",
  "accept",
  "host",
  "mcp-session-id",
  "mcp-protocol-version",
]);

function glob(value: unknown, where: string): GlobMatcher {
  if (typeof value !== "string") throw new CliError(`${where}: must be a glob string`, EXIT.invalid);
  const compiled = compileGlob(value);
  if (!compiled.ok) throw new CliError(`${where}: ${compiled.issues[0]?.message ?? "invalid glob"}`, EXIT.invalid);
  return compiled.value;
}

function invalid(where: string, message: string): never {
  throw new CliError(`${where}: ${message}`, EXIT.invalid);
}

/** `inject: {header, format}` or `inject: {env}` (or `inject: {argument}`, like the older `argument:`). */
function placementOf(e: Record<string, unknown>, where: string): CredentialPlacement {
  const inject = e["inject"];
  if (inject === undefined) {
    if (typeof e["argument"] !== "string" || e["argument"] === "") invalid(where, "needs `argument` or `inject`");
    return { kind: "argument", name: e["argument"], tool: glob(e["tool"], `${where}.tool`) };
  }
  if (e["argument"] !== undefined) invalid(where, "give either `argument` or `inject`, not both");
  if (typeof inject !== "object" || inject === null || Array.isArray(inject))
    invalid(`${where}.inject`, "must be a mapping");
  const i = inject as Record<string, unknown>;
  const kinds = ["header", "env", "argument"].filter((k) => i[k] !== undefined);
  const allowed = kinds[0] === "header" ? ["header", "format"] : kinds;
  const extra = Object.keys(i).find((k) => !allowed.includes(k));
  if (kinds.length !== 1 || extra !== undefined) {
    invalid(`${where}.inject`, "must be one of {header, format?}, {env} or {argument}");
  }
  if (kinds[0] === "argument") {
    if (typeof i["argument"] !== "string" || i["argument"] === "")
      invalid(`${where}.inject.argument`, "must be a name");
    return { kind: "argument", name: i["argument"], tool: glob(e["tool"], `${where}.tool`) };
  }
  if (e["tool"] !== undefined)
    invalid(`${where}.tool`, "a header or environment credential applies to the whole server");
  if (kinds[0] === "env") {
    const name = i["env"];
    if (typeof name !== "string" || !ENV_NAME.test(name)) invalid(`${where}.inject.env`, "must be a variable name");
    return { kind: "env", name };
  }
  const name = i["header"];
  if (typeof name !== "string" || !HEADER_NAME.test(name)) invalid(`${where}.inject.header`, "must be a header name");
  if (RESERVED_HEADERS.has(name.toLowerCase()))
    invalid(`${where}.inject.header`, `\`${name}\` belongs to the transport`);
  const format = i["format"] ?? "{value}";
  if (typeof format !== "string" || !format.includes("{value}") || /[\r\n\0]/.test(format)) {
    invalid(`${where}.inject.format`, "must be one line containing `{value}`");
  }
  return { kind: "header", name, format };
}

/** Checks the `credentials:` list of the config file `file` (named in messages); invalid → exit 4 naming the entry. */
export function credentialRulesFrom(list: unknown, file: string, locate?: ConfigLocator): CredentialRule[] {
  if (list === undefined || list === null) return [];
  const at = (path: readonly (string | number)[]): string => locate?.(path) ?? file;
  if (!Array.isArray(list)) throw new CliError(`${at(["credentials"])}: \`credentials\` must be a list`, EXIT.invalid);
  return list.map((entry: unknown, i) => {
    const where = `${at(["credentials", i])}: credentials.${i}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) invalid(where, "must be a mapping");
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (KEYS.includes(key)) continue;
      const near = suggest(key, KEYS);
      invalid(
        where,
        `unknown key \`${key}\` (${near !== undefined ? `did you mean \`${near}\`?` : `expected ${KEYS.join(", ")}`})`,
      );
    }
    if (typeof e["secret"] !== "string" || e["secret"] === "") invalid(where, "needs `secret` (a vault entry name)");
    const place = placementOf(e, where);
    return {
      secret: e["secret"],
      server: glob(e["server"] ?? "*", `${where}.server`),
      place,
      where: `credentials.${i}`,
      at: at(["credentials", i]),
      ...(e["server"] === undefined ? { anyServer: true as const } : {}),
    };
  });
}

/**
 * What a person should hear about `rules` at start: an entry without `server` puts its secret into every
 * upstream's accepted calls (or every upstream's transport), a server added later or one nobody trusts
 * included. Written as `server: "*"`, that choice is the person's own and nothing is said.
 */
export function credentialWarnings(rules: readonly CredentialRule[]): string[] {
  return rules
    .filter((r) => r.anyServer === true)
    .map(
      (r) =>
        `${r.where} (\`${r.secret}\`) names no \`server\`, so it goes to every upstream, any added later included: name the upstream(s) it is for (\`server: github\`), or write \`server: "*"\` if every one is meant`,
    );
}

/**
 * Why `rules` cannot serve `upstreams` (their names): an entry without `server` would put its secret into
 * every one of two or more upstreams, which nobody meant by leaving the key out. With one upstream that
 * is the one it is for, and {@link credentialWarnings} says what happens when a second is added.
 */
export function credentialProblems(rules: readonly CredentialRule[], upstreams: readonly string[]): string[] {
  if (upstreams.length < 2) return [];
  const names = upstreams.map((n) => `\`${n}\``).join(", ");
  return rules
    .filter((r) => r.anyServer === true)
    .map(
      (r) =>
        `${r.at ?? "config"}: ${r.where} (\`${r.secret}\`) names no \`server\`, and ${upstreams.length} upstreams are configured (${names}): name the upstream(s) it is for (\`server: ${upstreams[0] ?? "github"}\`), or write \`server: "*"\` if every one is meant`,
    );
}

/** The transport credentials of one upstream: headers for a URL, environment for a command. Names, never values, in errors. */
function upstreamCredentials(
  spec: UpstreamSpec,
  rules: readonly CredentialRule[],
  vault: Readonly<Record<string, string>>,
): UpstreamCredentials | undefined {
  const headers: Record<string, string> = {};
  const env: Record<string, string> = {};
  const injected: string[] = [];
  for (const rule of rules) {
    if (rule.place.kind === "argument" || !rule.server(spec.name)) continue;
    const value = Object.hasOwn(vault, rule.secret) ? vault[rule.secret] : undefined;
    if (value === undefined) throw new Error(`${rule.where}: vault has no entry \`${rule.secret}\``);
    if (rule.place.kind === "header") {
      if (spec.transport === "stdio")
        throw new Error(`${rule.where}: a header needs a URL upstream, \`${spec.name}\` is a command`);
      if (/[\r\n\0]/.test(value))
        throw new Error(`${rule.where}: vault entry \`${rule.secret}\` cannot be a header value`);
      headers[rule.place.name] = rule.place.format.split("{value}").join(value);
    } else {
      if (spec.transport !== "stdio")
        throw new Error(`${rule.where}: an environment variable needs a command upstream, \`${spec.name}\` is a URL`);
      if (value.includes("\0"))
        throw new Error(`${rule.where}: vault entry \`${rule.secret}\` cannot be an environment value`);
      env[rule.place.name] = value;
    }
    injected.push(rule.secret);
  }
  if (injected.length === 0) return undefined;
  return { ...(spec.transport === "stdio" ? { env } : { headers }), injected };
}

/**
 * The proxy's credential hook. For an accepted call, the vault entries that the config file names for its
 * server and tool go into their arguments — only for that call. For an upstream, `inject: {header}` and
 * `inject: {env}` entries go into its transport when it connects. The vault is opened with the home's key
 * on first use; `secretValues()` names every value in use so results, errors, logs and the audit hide them.
 */
export function createCredentialHook(options: {
  readonly home: string;
  readonly rules: readonly CredentialRule[];
  readonly seed: () => Promise<Uint8Array>;
}): CredentialHook | undefined {
  if (options.rules.length === 0) return undefined;
  let vault: Promise<Readonly<Record<string, string>>> | undefined;
  let known: readonly string[] = [];
  const open = (): Promise<Readonly<Record<string, string>>> =>
    (vault ??= options.seed().then((seed) => {
      const entries = readVault(options.home, seed);
      if (!entries.ok) throw new Error(entries.issues[0]?.message ?? "cannot open the vault");
      known = options.rules.map((r) => entries.value[r.secret]).filter((v): v is string => typeof v === "string");
      return entries.value;
    }));
  const hasTransportRules = options.rules.some((r) => r.place.kind !== "argument");
  return {
    async inject(server, tool, args) {
      const injections: CredentialInjection[] = options.rules
        .filter((r) => r.place.kind === "argument" && r.server(server) && r.place.tool(tool))
        .map((r) => ({ secret: r.secret, target: { kind: "argument", name: r.place.name } }));
      if (injections.length === 0) return { arguments: args, injected: [] };
      const result = injectCredentials(args, injections, await open());
      if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
      return { arguments: { ...result.value.arguments }, injected: result.value.injected };
    },
    secretValues: () => known,
    ...(hasTransportRules
      ? {
          async upstream(spec: UpstreamSpec) {
            if (!options.rules.some((r) => r.place.kind !== "argument" && r.server(spec.name))) return undefined;
            return upstreamCredentials(spec, options.rules, await open());
          },
        }
      : {}),
  };
}

/** Stops a start whose `credentials:` cannot serve `upstreams` ({@link credentialProblems}): exit 4, every entry named. */
export function assertCredentialsFit(rules: readonly CredentialRule[], upstreams: readonly { name: string }[]): void {
  const problems = credentialProblems(
    rules,
    upstreams.map((u) => u.name),
  );
  if (problems.length > 0) throw new CliError(problems.join("\n"), EXIT.invalid);
}
