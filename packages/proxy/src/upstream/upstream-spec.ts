import { parse as parseShellWords } from "shell-quote";
import { fail, ok, type Issue, type Result } from "@acp/core";

/** How the proxy talks to one upstream MCP server. */
export type UpstreamTransportKind = "stdio" | "streamable-http" | "sse";

/** One upstream MCP server, from `config.yml` `proxy.upstream_servers` or `--upstream`. */
export type UpstreamSpec =
  | {
      readonly name: string;
      readonly transport: "stdio";
      /** The program to spawn. */
      readonly command: string;
      readonly args: readonly string[];
      /** Extra environment for the server (added to the SDK's safe default environment). */
      readonly env?: Readonly<Record<string, string>>;
      readonly cwd?: string;
      /**
       * Marked trusted by the person: its results are not untrusted text to the session runtime, and its
       * tools' `readOnlyHint` counts (from an untrusted server it is set aside: server-annotations.ts).
       */
      readonly trusted?: boolean;
    }
  | {
      readonly name: string;
      /** `streamable-http` falls back to SSE when the server answers the streamable request with a 4xx. */
      readonly transport: "streamable-http" | "sse";
      readonly url: string;
      readonly trusted?: boolean;
    };

/**
 * Vault credentials for one upstream's transport, resolved when it connects: HTTP headers sent with every
 * request to a URL upstream, or environment variables of a spawned (stdio) upstream. Values never leave
 * the transport: they are not logged, audited or returned to the agent.
 */
export interface UpstreamCredentials {
  /** Header name → value, for `streamable-http` and `sse` upstreams. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Variable name → value, for the child process of a `stdio` upstream. */
  readonly env?: Readonly<Record<string, string>>;
  /** The vault entry names used (audited by name only). */
  readonly injected: readonly string[];
}

/** Upstream names become tool-name prefixes: letters, digits, `-` and `_`, at most 64 characters. */
export const UPSTREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * Splits a command line like a POSIX shell does (quotes, backslashes), without running a shell.
 * Operators (`|`, `&&`, `>`), globs and `$VAR` substitutions are refused rather than silently mangled.
 */
export function splitCommandLine(line: string): Result<readonly string[]> {
  const words: string[] = [];
  const issue = (message: string): Result<readonly string[]> =>
    fail([{ code: "proxy_upstream_command_invalid", path: [], message }]);
  const unbalanced = unbalancedQuoting(line);
  if (unbalanced !== undefined) return issue(`upstream command \`${line}\`: ${unbalanced}`);
  const parsed = parseShellWords(line, (name) => `$${name}`);
  for (const word of parsed) {
    if (typeof word !== "string") {
      if ("op" in word && word.op === "glob") {
        return issue(
          `upstream command \`${line}\`: a glob \`${word.pattern}\` is not supported (run a script instead)`,
        );
      }
      const shown = "op" in word ? word.op : "comment" in word ? `#${word.comment}` : "?";
      return issue(`upstream command \`${line}\`: shell syntax \`${shown}\` is not supported (run a script instead)`);
    }
    words.push(word);
  }
  if (words.length === 0) return issue("upstream command is empty");
  const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(words[0] ?? "");
  if (assignment !== null) {
    // `NAME=value cmd` needs a shell; the value (often a secret) is not repeated in the message
    return issue(
      `upstream command: \`${assignment[1]}=…\` sets an environment variable, which needs a shell: ` +
        "put the variable under `env:` of a proxy.upstream_servers entry in config.yml " +
        "(a secret: `credentials:` from the vault), or in the MCP client's `env`",
    );
  }
  return ok(words);
}

/**
 * What shell-quote silently drops: a quote that is never closed (`'/tmp/my dir` would become two words) or
 * a backslash with nothing after it. Scans like a POSIX shell: nothing escapes inside '…', `\` escapes the
 * next character outside quotes and inside "…".
 */
function unbalancedQuoting(line: string): string | undefined {
  let quote: "'" | '"' | undefined;
  let opened = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === "\\") {
      if (i === line.length - 1) return "trailing backslash with nothing to escape";
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
      opened = i;
    }
  }
  if (quote === undefined) return undefined;
  return `unterminated quote \`${quote}\` (opened at character ${opened + 1}): close it, or escape it with \`\\\``;
}

/** Whether a `--upstream` value is a URL (http/https) rather than a command. */
export function isUpstreamUrl(value: string): boolean {
  return /^https?:\/\//i.test(value.trim());
}

/**
 * Turns a `--upstream CMD_OR_URL` value into a spec: a URL is streamable HTTP (with SSE fallback), a URL
 * ending in `/sse` is SSE, anything else is a command split like a shell does.
 */
export function parseUpstreamArgument(value: string, name: string): Result<UpstreamSpec> {
  const issues: Issue[] = [];
  if (!UPSTREAM_NAME.test(name)) {
    issues.push({
      code: "proxy_upstream_name_invalid",
      path: [],
      message: `upstream name \`${name}\` is not allowed (letters, digits, \`-\` and \`_\`, at most 64)`,
    });
    return fail(issues);
  }
  // any `scheme://` is an address (`htps://…` mistyped, `ws://…`), refused as one rather than spawned as a program
  if (isUpstreamUrl(value) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value.trim())) {
    return parseUpstreamUrl(value.trim(), name, undefined);
  }
  const words = splitCommandLine(value);
  if (!words.ok) return words;
  const [command, ...args] = words.value;
  return ok({ name, transport: "stdio", command: command ?? "", args });
}

/** Validates an upstream URL and picks its transport (explicit, or `/sse` suffix → SSE, else streamable HTTP). */
export function parseUpstreamUrl(
  value: string,
  name: string,
  transport: "streamable-http" | "sse" | undefined,
): Result<UpstreamSpec> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const shown = urlForMessage(value);
    return fail([{ code: "proxy_upstream_url_invalid", path: [], message: `upstream url \`${shown}\` is not a url` }]);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    const shown = urlForMessage(value);
    return fail([
      { code: "proxy_upstream_url_invalid", path: [], message: `upstream url \`${shown}\` must be http or https` },
    ]);
  }
  // Node's fetch refuses a url with credentials, so such an upstream only failed once started: refused here
  if (url.username !== "" || url.password !== "") {
    const shown = urlForMessage(value);
    return fail([
      {
        code: "proxy_upstream_url_invalid",
        path: [],
        message: `upstream url \`${shown}\` carries a user or password, which fetch refuses to send: keep it in the vault and send it as a header, \`credentials:\` with \`inject: { header: Authorization, format: … }\` (acp docs reference/vault)`,
      },
    ]);
  }
  const kind = transport ?? (url.pathname.endsWith("/sse") ? "sse" : "streamable-http");
  return ok({ name, transport: kind, url: url.toString() });
}

/**
 * An address as written, for a message: its user and password, the values of its query and its fragment
 * left out (`https://…@host/mcp?api_key=…`), where tokens are often written; it need not parse as a URL
 * (everything between `://` and the last `@` before the query is taken for a user and password).
 */
function urlForMessage(text: string): string {
  const hash = text.indexOf("#");
  const beforeHash = hash === -1 ? text : text.slice(0, hash);
  const question = beforeHash.indexOf("?");
  const base = question === -1 ? beforeHash : beforeHash.slice(0, question);
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(base)?.[0] ?? "";
  const at = base.lastIndexOf("@");
  const address = at >= scheme.length ? `${scheme}…${base.slice(at)}` : base;
  const query =
    question === -1
      ? ""
      : `?${beforeHash
          .slice(question + 1)
          .split("&")
          .map((item) => (item.includes("=") ? `${item.slice(0, item.indexOf("="))}=…` : item === "" ? "" : "…"))
          .join("&")}`;
  return `${address}${query}${hash === -1 ? "" : "#…"}`;
}

/** A name for an ad-hoc upstream: the command's base name (`server-filesystem`) or the URL's host. */
export function defaultUpstreamName(value: string): string {
  let base: string;
  if (isUpstreamUrl(value)) {
    try {
      base = new URL(value.trim()).hostname;
    } catch {
      base = "upstream";
    }
  } else {
    const words = splitCommandLine(value);
    const meaningful = words.ok
      ? words.value.filter((w) => !w.startsWith("-") && !/^(npx|node|uvx|bunx|python3?)$/.test(w))
      : [];
    base = (meaningful[0] ?? "upstream").split("/").pop() ?? "upstream";
  }
  const cleaned = base
    .replace(/@[^@]*$/, "")
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^[-_]+/, "");
  return cleaned.slice(0, 64) || "upstream";
}
