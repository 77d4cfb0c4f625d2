import type { PrefixMode } from "../config/proxy-config.js";

/** Between the server name and the tool (or prompt) name in a prefixed name: `github__create_issue`. */
export const PREFIX_SEPARATOR = "__";

/** One upstream's listing of named items (tools or prompts), passed through as the server sent them. */
export interface NamedListing<T extends { readonly name: string }> {
  readonly server: string;
  readonly items: readonly T[];
  /**
   * False for a server that is down: its last names still count for collisions (so the names the agent
   * sees stay stable while it is away) but are not served.
   */
  readonly live?: boolean;
}

/** Where an exposed name leads. */
export interface NameTarget<T> {
  readonly server: string;
  /** The name on the upstream server. */
  readonly name: string;
  /** The upstream definition, unchanged. */
  readonly item: T;
}

/** The union of several upstreams' items with the names the agent sees. */
export interface NameIndex<T extends { readonly name: string }> {
  /** Items as the agent sees them: the upstream definition with only `name` changed when prefixed. */
  readonly exposed: readonly T[];
  resolve(exposedName: string): NameTarget<T> | undefined;
  /** Names that could not be exposed (a prefixed name colliding with another name); reported, not served. */
  readonly dropped: readonly {
    readonly server: string;
    readonly name: string;
    /** The server whose item has that exposed name. */
    readonly servedBy: string;
  }[];
}

/**
 * Builds the union of upstream items. `on-collision` prefixes only names offered by more than one server;
 * `always` prefixes every name; `never` keeps names and serves a colliding name from the first server
 * listed (the later ones are dropped and reported).
 */
export function buildNameIndex<T extends { readonly name: string }>(
  listings: readonly NamedListing<T>[],
  mode: PrefixMode,
): NameIndex<T> {
  const owners = new Map<string, number>();
  for (const listing of listings) {
    for (const name of new Set(listing.items.map((i) => i.name))) owners.set(name, (owners.get(name) ?? 0) + 1);
  }
  const targets = new Map<string, NameTarget<T>>();
  const exposed: T[] = [];
  const dropped: { server: string; name: string; servedBy: string }[] = [];
  for (const listing of listings) {
    if (listing.live === false) continue;
    for (const item of listing.items) {
      const prefixed = mode === "always" || (mode === "on-collision" && (owners.get(item.name) ?? 0) > 1);
      const exposedName = prefixed ? `${listing.server}${PREFIX_SEPARATOR}${item.name}` : item.name;
      const taken = targets.get(exposedName);
      if (taken !== undefined) {
        dropped.push({ server: listing.server, name: item.name, servedBy: taken.server });
        continue;
      }
      targets.set(exposedName, { server: listing.server, name: item.name, item });
      exposed.push(prefixed ? { ...item, name: exposedName } : item);
    }
  }
  return { exposed, resolve: (name) => targets.get(name), dropped };
}
