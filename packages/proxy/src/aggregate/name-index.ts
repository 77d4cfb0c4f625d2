import type { PrefixMode } from "../config/proxy-config.js";
import { MAX_ITEM_NAME } from "./item-name.js";

/** Between the server name and the tool (or prompt) name in a prefixed name: `github__create_issue`. */
export const PREFIX_SEPARATOR = "__";

/** Who serves a reserved name (the proxy's own tool) in {@link NameIndex.dropped}. */
export const PROXY_ITSELF = "acp-proxy";

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
  /**
   * Items not served because their prefixed name would be longer than an MCP name may be
   * ({@link MAX_ITEM_NAME}): a client that holds `tools/list` to the name format would refuse the whole
   * listing for one such name. Reported, not served.
   */
  readonly overlong: readonly { readonly server: string; readonly name: string; readonly exposedName: string }[];
}

/**
 * Builds the union of upstream items. `on-collision` prefixes only names offered by more than one server;
 * `always` prefixes every name; `never` keeps names and serves a colliding name from the first server
 * listed (the later ones are dropped and reported).
 *
 * A prefixed name is the proxy's, made of the server's name: it is given out before any name an upstream
 * chose, so an upstream's own tool named `github__create_issue` never takes the name of `github`'s
 * `create_issue` (it is dropped, whichever server is listed first). `reserved` names belong to the proxy
 * itself (its own tools): an upstream item of that name counts as colliding with it (prefixed
 * `on-collision`, dropped `never`, reported as served by {@link PROXY_ITSELF}). An item whose prefixed name
 * would be longer than {@link MAX_ITEM_NAME} is not served ({@link NameIndex.overlong}).
 */
export function buildNameIndex<T extends { readonly name: string }>(
  listings: readonly NamedListing<T>[],
  mode: PrefixMode,
  reserved: readonly string[] = [],
): NameIndex<T> {
  const owners = new Map<string, number>();
  for (const name of reserved) owners.set(name, 1);
  for (const listing of listings) {
    for (const name of new Set(listing.items.map((i) => i.name))) owners.set(name, (owners.get(name) ?? 0) + 1);
  }
  const planned = listings
    .filter((listing) => listing.live !== false)
    .flatMap((listing) =>
      listing.items.map((item) => {
        const prefixed = mode === "always" || (mode === "on-collision" && (owners.get(item.name) ?? 0) > 1);
        const exposedName = prefixed ? `${listing.server}${PREFIX_SEPARATOR}${item.name}` : item.name;
        return { server: listing.server, item, prefixed, exposedName, served: false };
      }),
    );
  const overlong: { server: string; name: string; exposedName: string }[] = [];
  for (const entry of planned) {
    if (entry.exposedName.length <= MAX_ITEM_NAME) continue;
    overlong.push({ server: entry.server, name: entry.item.name, exposedName: entry.exposedName });
  }
  const targets = new Map<string, NameTarget<T>>();
  const taken = new Map<string, string>(reserved.map((name) => [name, PROXY_ITSELF]));
  const dropped: { server: string; name: string; servedBy: string }[] = [];
  // the proxy's prefixed names first, then the names upstreams chose
  for (const prefixedPass of [true, false]) {
    for (const entry of planned) {
      if (entry.prefixed !== prefixedPass || entry.exposedName.length > MAX_ITEM_NAME) continue;
      const servedBy = taken.get(entry.exposedName);
      if (servedBy !== undefined) {
        dropped.push({ server: entry.server, name: entry.item.name, servedBy });
        continue;
      }
      taken.set(entry.exposedName, entry.server);
      targets.set(entry.exposedName, { server: entry.server, name: entry.item.name, item: entry.item });
      entry.served = true;
    }
  }
  const exposed = planned
    .filter((entry) => entry.served)
    .map((entry) => (entry.prefixed ? { ...entry.item, name: entry.exposedName } : entry.item));
  return { exposed, resolve: (name) => targets.get(name), dropped, overlong };
}
