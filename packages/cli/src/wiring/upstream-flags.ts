import { formatIssue, printable } from "@acp/core";
import { defaultUpstreamName, parseUpstreamArgument, type UpstreamSpec } from "@acp/proxy";
import { CliError, EXIT } from "../exit-codes.js";

/** The upstream flags `acp proxy` and `acp run` share. */
export interface UpstreamFlags {
  readonly upstream?: readonly string[];
  readonly name?: readonly string[];
  readonly trust?: readonly string[];
}

/**
 * The upstreams a command serves: the config file's (`configured`), then each `--upstream` named by its
 * `--name` (or from its command), with those `--trust` names marked trusted. Usage errors (exit 2) for a
 * `--name` used twice or given for some upstreams only, an `--upstream` that does not parse, and a `--trust`
 * that names no upstream.
 */
export function upstreamsOf(flags: UpstreamFlags, configured: readonly UpstreamSpec[]): UpstreamSpec[] {
  return trustNamed([...configured, ...adHocUpstreams(flags, configured)], flags.trust ?? []);
}

function adHocUpstreams(flags: UpstreamFlags, configured: readonly UpstreamSpec[]): UpstreamSpec[] {
  const taken = new Set(configured.map((u) => u.name));
  const values = flags.upstream ?? [];
  const names = (flags.name ?? []).length;
  if (names > values.length) throw new CliError("more --name than --upstream values", EXIT.usage);
  // names go to the upstreams in order: with some missing, a name (what `server:` rules match) would land on
  // another server than the user meant, silently
  if (names > 0 && names < values.length) {
    throw new CliError(
      `${values.length} --upstream values but ${names} --name: give every --upstream its --name, or none (each then named from its command)`,
      EXIT.usage,
    );
  }
  return values.map((value, index) => {
    const given = flags.name?.[index];
    // a name given with --name is what policy rules match (`server:`): never changed behind the user's back
    if (given !== undefined && taken.has(given)) {
      throw new CliError(
        `upstream name \`${given}\` is used twice (--name, or a proxy.upstream_servers entry): give each upstream its own`,
        EXIT.usage,
      );
    }
    let name = given ?? defaultUpstreamName(value);
    for (let n = 2; taken.has(name); n++) name = `${defaultUpstreamName(value)}-${n}`;
    taken.add(name);
    const spec = parseUpstreamArgument(value, name);
    if (!spec.ok) throw new CliError(spec.issues.map((i) => formatIssue(i)).join("\n"), EXIT.usage);
    return spec.value;
  });
}

/** `upstreams` with those `--trust` names marked trusted; a name that is no upstream's is a usage error. */
function trustNamed(upstreams: readonly UpstreamSpec[], names: readonly string[]): UpstreamSpec[] {
  for (const name of names) {
    if (!upstreams.some((u) => u.name === name)) {
      throw new CliError(
        `--trust \`${printable(name)}\` names no upstream (${
          upstreams.length === 0
            ? "there are none"
            : `the upstreams: ${upstreams.map((u) => `\`${u.name}\``).join(", ")}`
        }; an --upstream is named by --name, else from its command)`,
        EXIT.usage,
      );
    }
  }
  return upstreams.map((u) => (names.includes(u.name) ? { ...u, trusted: true } : u));
}
