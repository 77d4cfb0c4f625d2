import { PromptSchema, ResourceSchema, ResourceTemplateSchema, type Result } from "@modelcontextprotocol/sdk/types.js";
import { ListingCheck, MAX_LISTING_CHARS, type ItemSchema } from "../upstream/refused-item.js";
import type { PrefixMode } from "../config/proxy-config.js";
import type { UpstreamPool, UpstreamTool } from "../upstream/upstream-pool.js";
import { MAX_ITEM_NAME, whyPromptRefused } from "./item-name.js";
import { whyResourceRefused } from "./resource-name.js";
import { buildNameIndex, type NameIndex } from "./name-index.js";

/** A named item an upstream listed (a prompt), every field kept. */
export type NamedItem = Result & { readonly name: string };

/** Resources of every upstream with the server each URI came from. */
export interface ResourceUnion {
  readonly resources: readonly Result[];
  readonly owners: ReadonlyMap<string, string>;
}

/**
 * What the agent sees of all upstreams together: tools and prompts under their exposed names, resources
 * and templates unioned, each traced back to the server that offered it. Rebuilt after a list change.
 */
export class ProxyCatalog {
  readonly #pool: UpstreamPool;
  readonly #mode: PrefixMode;
  #tools: NameIndex<UpstreamTool> | undefined;
  #prompts: NameIndex<NamedItem> | undefined;
  #owners = new Map<string, string>();
  #templates: { server: string; prefix: string }[] = [];
  readonly #report: (line: string) => void;
  readonly #reported = new Set<string>();
  readonly #reservedTools: readonly string[];

  /**
   * `report` hears, once each, the prompts, resources and templates that another server's shadow.
   * `reservedTools`: names of the proxy's own tools (`acp_submit_plan`), which no upstream tool is served as.
   */
  constructor(
    pool: UpstreamPool,
    mode: PrefixMode,
    report: (line: string) => void = () => undefined,
    reservedTools: readonly string[] = [],
  ) {
    this.#pool = pool;
    this.#mode = mode;
    this.#report = report;
    this.#reservedTools = reservedTools;
  }

  #once(key: string, line: string): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#report(line);
  }

  /** Forgets cached listings (an upstream said its list changed, or stopped). */
  invalidate(): void {
    this.#tools = undefined;
    this.#prompts = undefined;
  }

  /** The union of every connected upstream's tools. */
  tools(): NameIndex<UpstreamTool> {
    if (this.#tools !== undefined) return this.#tools;
    this.#tools = buildNameIndex(
      this.#pool.list().map((u) => ({ server: u.spec.name, items: u.tools, live: u.status === "connected" })),
      this.#mode,
      this.#reservedTools,
    );
    this.#reportOverlong("tool", this.#tools);
    return this.#tools;
  }

  /** Says, once each, the items not served because their prefixed name is too long. */
  #reportOverlong(kind: "tool" | "prompt", index: NameIndex<{ readonly name: string }>): void {
    for (const { server, name, exposedName } of index.overlong) {
      this.#once(
        `${kind}-overlong\u0000${server}\u0000${name}`,
        `upstream \`${server}\`: ${kind} \`${name}\` is not served: prefixed it would be ${exposedName.length} characters, past the ${MAX_ITEM_NAME} an MCP name may have (prefix_tools: ${this.#mode})`,
      );
    }
  }

  /** The union of every connected upstream's prompts (fetched when not cached). */
  async prompts(): Promise<NameIndex<NamedItem>> {
    if (this.#prompts !== undefined) return this.#prompts;
    const listings = await this.#listEach("prompts", "prompts/list");
    this.#prompts = buildNameIndex(
      listings.map(({ server, items }) => ({ server, items: items.filter(isNamed) })),
      this.#mode,
    );
    this.#reportOverlong("prompt", this.#prompts);
    for (const { server, name, servedBy } of this.#prompts.dropped) {
      this.#once(
        `prompt\u0000${server}\u0000${name}`,
        `upstream \`${server}\`: prompt \`${name}\` is not served: \`${servedBy}\` offers a prompt of the same name (prefix_tools: ${this.#mode})`,
      );
    }
    return this.#prompts;
  }

  /** The union of every connected upstream's resources; remembers which server owns each URI. */
  async resources(): Promise<ResourceUnion> {
    const listings = await this.#listEach("resources", "resources/list");
    const owners = new Map<string, string>();
    const resources: Result[] = [];
    for (const { server, items } of listings) {
      for (const item of items) {
        const uri = item["uri"];
        if (typeof uri !== "string") continue;
        const owner = owners.get(uri);
        if (owner !== undefined) {
          // a URI names one resource: the first server listed serves it (resources are never renamed)
          if (owner !== server) {
            this.#once(
              `resource\u0000${server}\u0000${uri}`,
              `upstream \`${server}\`: resource ${JSON.stringify(uri)} is not served: \`${owner}\` lists the same URI, and reads of it go there`,
            );
          }
          continue;
        }
        owners.set(uri, server);
        resources.push(item);
      }
    }
    this.#owners = owners;
    return { resources, owners };
  }

  /** The union of every connected upstream's resource templates. */
  async resourceTemplates(): Promise<readonly Result[]> {
    const listings = await this.#listEach("resources", "resources/templates/list");
    this.#templates = listings.flatMap(({ server, items }) =>
      items.flatMap((t) =>
        typeof t["uriTemplate"] === "string" ? [{ server, prefix: t["uriTemplate"].split("{")[0] ?? "" }] : [],
      ),
    );
    const byPrefix = new Map<string, string>();
    for (const { server, prefix } of this.#templates) {
      const first = byPrefix.get(prefix);
      if (first === undefined) byPrefix.set(prefix, server);
      else if (first !== server && prefix !== "") {
        this.#once(
          `template\u0000${server}\u0000${prefix}`,
          `upstream \`${server}\`: resource template ${JSON.stringify(`${prefix}{…}`)} is not served: \`${first}\` offers a template with the same start, and reads of such URIs go there`,
        );
      }
    }
    return listings.flatMap((l) => l.items);
  }

  /** Which upstream serves a URI: from the last listing, then templates, then the only resource server. */
  async serverForUri(uri: string): Promise<string | undefined> {
    const known = this.#owners.get(uri) ?? (await this.resources()).owners.get(uri);
    if (known !== undefined) return known;
    if (this.#templates.length === 0) await this.resourceTemplates();
    const byTemplate = this.#templates
      .filter((t) => t.prefix !== "" && uri.startsWith(t.prefix))
      .sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if (byTemplate !== undefined) return byTemplate.server;
    const servers = this.#pool.connected().filter((u) => u.capabilities?.resources !== undefined);
    return servers.length === 1 ? servers[0]?.spec.name : undefined;
  }

  async #listEach(
    capability: "prompts" | "resources",
    method: keyof typeof LISTINGS,
  ): Promise<{ server: string; items: Result[] }[]> {
    const upstreams = this.#pool.connected().filter((u) => u.capabilities?.[capability] !== undefined);
    const listings = await Promise.all(
      upstreams.map(async (u) => ({ server: u.spec.name, items: await this.#listAll(u.spec.name, method) })),
    );
    return listings;
  }

  /**
   * Every page of one listing. An item the MCP schema refuses, one too deep to write as JSON, a prompt whose
   * name is not of the MCP name format or whose text does not read as it is ({@link whyPromptRefused}), a resource or template whose URI, name
   * or title a person cannot read as it is ({@link whyResourceRefused}), and what is listed past the size
   * one server's listing may take are left out (and said once): the agent's client checks the listing
   * whole, so it would cost every server's items (see {@link ListingCheck}).
   */
  async #listAll(server: string, method: keyof typeof LISTINGS): Promise<Result[]> {
    const { key, schema, id, kind } = LISTINGS[method];
    const items: Result[] = [];
    // a prompt's name is held to the tool name format; a resource is named by its URI, its name is display text
    const rule =
      method === "prompts/list"
        ? whyPromptRefused
        : (_uri: string, item: Readonly<Record<string, unknown>>) => whyResourceRefused(item, id);
    const check = new ListingCheck(schema, id, kind, MAX_LISTING_CHARS, rule);
    let cursor: string | undefined;
    try {
      for (let page = 0; page < 100 && !check.full; page++) {
        const result = await this.#pool.request(server, method, cursor !== undefined ? { cursor } : undefined);
        const list: unknown = result[key];
        for (const item of Array.isArray(list) ? (list as unknown[]) : []) {
          if (check.admit(item)) items.push(item as Result);
        }
        cursor = typeof result["nextCursor"] === "string" ? result["nextCursor"] : undefined;
        if (cursor === undefined) break;
      }
    } catch {
      // one failing upstream leaves the others listed; the failure itself is reported by the pool
    }
    const said = check.describe();
    if (said !== "") this.#once(`refused\u0000${server}\u0000${said}`, `upstream \`${server}\`: ${said}`);
    return items;
  }
}

/** What each listing is called, and how one of its items is checked and named. */
const LISTINGS = {
  "prompts/list": { key: "prompts", schema: PromptSchema, id: "name", kind: "prompt" },
  "resources/list": { key: "resources", schema: ResourceSchema, id: "uri", kind: "resource" },
  "resources/templates/list": {
    key: "resourceTemplates",
    schema: ResourceTemplateSchema,
    id: "uriTemplate",
    kind: "resource template",
  },
} as const satisfies Record<string, { key: string; schema: ItemSchema; id: string; kind: string }>;

function isNamed(value: Result): value is NamedItem {
  return typeof value["name"] === "string";
}
