/**
 * The normal form of a path or URL argument: what a server reads a value as, which an `ask` or `deny`
 * rule's glob is also tried on (`/home/me//.ssh/id_rsa` is `/home/me/.ssh/id_rsa`).
 */

import { homeReferenceAsTilde, homesWithin } from "./home-references.js";

/** Where a path is not in normal form: an empty, `.` or `..` segment. */
const ODD_PATH = /\/\/|(?:^|\/)\.\.?(?:\/|$)/;
/** The scheme and authority of a URL, kept as they are when its path is normalised. */
const URL_START = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The normal form of a path (or of a URL's path) when `text` is not in it, as POSIX `path.normalize`
 * gives it: runs of `/` made one, `.` segments dropped, `..` segments resolved (never above the root), a
 * trailing `/` kept; undefined when it already is in normal form. A server reads `/home/me//.ssh/id_rsa` and `/srv/x/../.ssh/id_rsa` as the normal form,
 * which is what an `ask` or `deny` rule's glob is written for.
 */
export function normalizePath(text: string): string | undefined {
  const start = URL_START.exec(text)?.[0] ?? "";
  const path = text.slice(start.length);
  if (!ODD_PATH.test(path)) return undefined;
  const absolute = path.startsWith("/");
  const trailing = path.endsWith("/");
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(segment);
  }
  const body = out.join("/");
  const shown = body === "" && !absolute ? "." : body;
  const tail = trailing && shown !== "" ? "/" : "";
  const normal = `${start}${absolute ? "/" : ""}${shown}${tail}`;
  return normal === text ? undefined : normal;
}

/** URL schemes whose host the WHATWG parser normalises (lowercase, percent- and IDNA-decoded). */
const SPECIAL_SCHEMES = new Set(["http:", "https:", "ws:", "wss:", "ftp:"]);
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** `%XX` of an RFC 3986 unreserved character, decoded (`%61dmin` is `admin`); other escapes kept. */
export function decodeUnreserved(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9._~-]/.test(char) ? char : escape;
  });
}

/**
 * The normal form of a value an `ask` or `deny` rule's glob is also tried on, when it differs from the
 * value: an http(s), ws(s) or ftp URL as the WHATWG parser reads it — scheme and host lowercased, the
 * host's trailing dot, a default port and any user info dropped, the path in normal form with its
 * unreserved escapes decoded (`HTTPS://x@EVIL.example.:443//%61dmin/` is `https://evil.example/admin/`);
 * anything else as {@link normalizePath} gives it. Undefined when it is in normal form already.
 */
export function normalizeValue(text: string): string | undefined {
  if (SCHEME.test(text)) {
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    if (url !== undefined && SPECIAL_SCHEMES.has(url.protocol)) {
      const host = url.hostname.endsWith(".") ? url.hostname.slice(0, -1) : url.hostname;
      const path = decodeUnreserved(normalizePath(url.pathname) ?? url.pathname);
      const port = url.port === "" ? "" : `:${url.port}`;
      const normal = `${url.protocol}//${host}${port}${path}${url.search}${url.hash}`;
      return normal === text ? undefined : normal;
    }
  }
  return normalizePath(text);
}

/** ASCII white space and C0 controls at either end: what the WHATWG URL parser strips, and many servers trim. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const EDGES = /^[\x00-\x20]+|[\x00-\x20]+$/g;
const LINE_BREAK = /[\n\r\u2028\u2029]/;
const ESCAPE = /%[0-9A-Fa-f]{2}/;
const NON_ASCII = /[\u0080-\uffff]/;
/** The longest value also read in the spellings past its normal form (a path, a URL, an address). */
export const MAX_RESPELLED_LENGTH = 4096;

/**
 * Whether a value is read in the spellings past its normal form ({@link respellings}): of one line (white
 * space at its ends aside) and at most {@link MAX_RESPELLED_LENGTH} characters: a path, a URL, an address.
 */
export function respelledInFull(text: string): boolean {
  return text.length <= MAX_RESPELLED_LENGTH && !LINE_BREAK.test(text.replace(EDGES, ""));
}

/** A run that may be a domain name with a label not in ASCII (`bücher.example`). */
const DOMAIN_LIKE = /[\p{L}\p{M}\p{N}_-]+(?:\.[\p{L}\p{M}\p{N}_-]+)+/gu;

/**
 * `text` with each domain name that holds a label not in ASCII written as IDNA writes it (UTS #46, the
 * WHATWG URL parser: `a@bücher.example` is `a@xn--bcher-kva.example`), which is the host a mail service or
 * a client reaches.
 */
export function asciiDomains(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.replace(DOMAIN_LIKE, (name) => {
    if (!NON_ASCII.test(name)) return name;
    try {
      return new URL(`http://${name}/`).hostname;
    } catch {
      return name;
    }
  });
}

/** `text` with every run of `%XX` escapes decoded as UTF-8 (a run that is not UTF-8 kept as it is). */
export function decodeEscapes(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** The path a `file:` URL names (`file:///etc/%70asswd` is `/etc/passwd`), in normal form; undefined for anything else. */
function filePath(text: string): string | undefined {
  if (!/^file:/i.test(text)) return undefined;
  try {
    const path = decodeUnreserved(new URL(text).pathname);
    return normalizePath(path) ?? path;
  } catch {
    return undefined;
  }
}

/**
 * Where home directories are, with the user's name as the next segment (`/home/alice`): Linux, macOS,
 * Fedora Silverblue, FreeBSD, Solaris, Windows (with `/` for `\\`).
 */
export const USER_HOME_ROOTS: readonly string[] = [
  "/home",
  "/Users",
  "/var/home",
  "/usr/home",
  "/export/home",
  "C:/Users",
];
/** The homes of `root` (Linux, macOS). */
export const ROOT_HOMES: readonly string[] = ["/root", "/var/root"];
/** The stand-in for the unknown user of `~`: a segment no user name is (`/home/~/.ssh`). */
export const SOME_USER = "~";

/** `~` or `~name` at the start of a path, and what follows it: `/…` or nothing. */
const TILDE = /^~([^/\\]*)(?=\/|$)/;

/**
 * The paths a tool expands `~/rest` or `~name/rest` into (the shell, Python's `expanduser`): for `~`, the
 * home of whoever the server runs as, unknown here: each home root with the stand-in user `~`
 * (`/home/~/rest`, `/Users/~/rest`, …) and root's homes (`/root/rest`); for `~name`, that user's home in each
 * root (`/home/name/rest`, and `/root/rest` for `~root`). Each in normal form; empty for any other value.
 */
export function homePaths(text: string): string[] {
  const tilde = TILDE.exec(text);
  if (tilde === null) return [];
  const name = tilde[1] as string;
  const rest = text.slice(tilde[0].length);
  const out = USER_HOME_ROOTS.map((root) => `${root}/${name === "" ? SOME_USER : name}${rest}`);
  if (name === "" || name === "root") for (const home of ROOT_HOMES) out.push(`${home}${rest}`);
  return out.map((path) => normalizePath(path) ?? path);
}

/** The first segment of a URL written without its scheme: user info, a host and a port, then `/`, `?`, `#` or the end. */
const HOST_FIRST = /^(?:[^\s@/?#\\]+@)?([^\s@/?#\\:.][^\s@/?#\\:]*)(:\d+)?(?:[/?#]|$)/u;
const WHITE_SPACE = /\s/;

/**
 * The URLs a client makes of a value without a scheme (curl, a browser's address bar, `requests` after a
 * careless join): `//evil.example/x` (scheme-relative) and `evil.example/x`, `evil.example:8080`,
 * `localhost:3000/x` (a first segment with a dot or a port, or `localhost`), each as `https://` and
 * `http://`, in normal form. Empty for a value that has a scheme or no such first segment.
 */
export function schemelessUrls(text: string): string[] {
  if (WHITE_SPACE.test(text) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return [];
  let rest: string;
  if (text.startsWith("//")) {
    if (text.startsWith("///")) return [];
    rest = text.slice(2);
  } else {
    const first = HOST_FIRST.exec(text);
    if (first === null) return [];
    const host = first[1] as string;
    if (!host.includes(".") && first[2] === undefined && host.toLowerCase() !== "localhost") return [];
    rest = text;
  }
  return ["https://", "http://"].map((scheme) => normalizeValue(scheme + rest) ?? scheme + rest);
}

/** How many times a value's escapes are decoded one after another (a proxy, then a framework, then a tool). */
export const MAX_DECODINGS = 3;

/**
 * `text` decoded again and again ({@link decodeEscapes}), as a chain of readers that each decode once reads
 * it (`%252e%252e` is `%2e%2e`, then `..`): each decoding that differs from the one before, at most
 * {@link MAX_DECODINGS}, stopping once one has no escape left or decodes to itself.
 */
export function decodings(text: string): string[] {
  const out: string[] = [];
  let form = text;
  for (let i = 0; i < MAX_DECODINGS && ESCAPE.test(form); i++) {
    const next = decodeEscapes(form);
    if (next === form) break;
    out.push(next);
    form = next;
  }
  return out;
}

/**
 * `text` decoded as a reader that normalises what it decodes reads it, step after step: each decoding
 * ({@link decodeEscapes}) and then the form `compat` gives of it (its NFKC form), the next decoding made
 * of that form, so an escape NFKC makes is decoded too (`%EF%BC%85%32%65` is `％2e`, in NFKC `%2e`, then
 * `.`). `forms` are each decoding and each form `compat` gives, in order; at most {@link MAX_DECODINGS}
 * decodings, each counted as in {@link decodings} (NFKC is no decoding), stopping once a form has no
 * escape left or decodes to itself. `settled` is whether a further decoding of the last form would change
 * nothing (false for a chain still decoding after {@link MAX_DECODINGS}, as {@link settles} is).
 */
export function compatDecodings(
  text: string,
  compat: (form: string) => string | undefined,
): { forms: string[]; settled: boolean } {
  const forms: string[] = [];
  let form = text;
  let steps = 0;
  while (steps < MAX_DECODINGS && ESCAPE.test(form)) {
    const next = decodeEscapes(form);
    if (next === form) break;
    steps++;
    forms.push(next);
    const normal = compat(next);
    if (normal !== undefined) forms.push(normal);
    form = normal ?? next;
  }
  return { forms, settled: steps < MAX_DECODINGS || decodeEscapes(form) === form };
}

/** The NFKC form of a string not in ASCII when it differs from it (`％2e` is `%2e`); undefined otherwise. */
export function nfkcOf(text: string): string | undefined {
  if (!NON_ASCII.test(text)) return undefined;
  const nfkc = text.normalize("NFKC");
  return nfkc === text ? undefined : nfkc;
}

/**
 * Whether `text` reads the same once decoded {@link MAX_DECODINGS} times as after a further decoding: false
 * for `%2525252e` (`%2e` after three, `.` after four), whose reading by a longer chain is not known.
 * `all` is its {@link decodings}, when made already.
 */
export function settles(text: string, all: readonly string[] = decodings(text)): boolean {
  if (all.length < MAX_DECODINGS) return true;
  const last = all[all.length - 1] as string;
  return decodeEscapes(last) === last;
}

/**
 * `text` without the parameters of its path's segments (`;` up to the next `/`, `\`, `?` or `#`), as Tomcat,
 * Jetty and Spring read a path: `/srv/files/..;/etc/passwd` is `/srv/files/../etc/passwd` there; undefined
 * for a value without `;`.
 */
export function withoutParameters(text: string): string | undefined {
  if (!text.includes(";")) return undefined;
  const out = text.replace(/;[^/\\?#]*/g, "");
  return out === text ? undefined : out;
}

/** The characters that give a path or URL its structure, which a full-width or small form also spells in NFKC. */
const STRUCTURE = /[./\\%;:?#@]/g;
const ESCAPES = /%[0-9A-Fa-f]{2}/g;

/**
 * The NFKC form of `text` when it holds more of a path's or URL's structure than `text` (`．．／` is `../`,
 * `％２ｆ` is `%2f`, `＼` is `\`), or more escapes (`%２ｅ` is `%2e`, `.` once decoded), as a tool that
 * normalises its input reads it; undefined otherwise.
 */
export function structuralCompat(text: string): string | undefined {
  const nfkc = nfkcOf(text);
  if (nfkc === undefined) return undefined;
  const count = (form: string, what: RegExp): number => form.match(what)?.length ?? 0;
  return count(nfkc, STRUCTURE) > count(text, STRUCTURE) || count(nfkc, ESCAPES) > count(text, ESCAPES)
    ? nfkc
    : undefined;
}

/**
 * A Windows path's device prefix (`\\?\C:\x`, `\\.\C:\x`, the NT `\??\C:\x`), with `/` for `\`: the path
 * it names follows; `\\?\UNC\server\share` names `\\server\share`.
 */
const DEVICE_PREFIX = /^(?:\/\/[?.]\/|\/\?\?\/)(UNC\/)?/i;

/** The path a Windows device path names (`//?/C:/x` is `C:/x`, `//?/UNC/s/x` is `//s/x`); undefined for another. */
export function withoutDevicePrefix(slashed: string): string | undefined {
  const prefix = DEVICE_PREFIX.exec(slashed);
  if (prefix === null) return undefined;
  return (prefix[1] === undefined ? "" : "//") + slashed.slice(prefix[0].length);
}

/**
 * The spellings of a value an `ask` or `deny` rule's glob is also tried on, each differing from it: its
 * normal form ({@link normalizeValue}); and, for a value of one line and at most 4,096 characters (a path,
 * a URL, an address), that of the value trimmed of white space and control characters at its ends (as the
 * WHATWG URL parser and many servers read ` https://evil.example/x`), and of its NFKC form (`．．／` is
 * `../`), that of a path with its unreserved
 * escapes decoded (`/etc/%70asswd` is `/etc/passwd`, `/home/me/%2essh/id_rsa` is `/home/me/.ssh/id_rsa`),
 * that of the value with every escape decoded, `%2f` too (`/srv/files/..%2f..%2fetc/passwd` is
 * `/etc/passwd` to a server that decodes after routing), and decoded again, up to {@link MAX_DECODINGS}
 * times ({@link decodings}: `%252e%252e` is `..` to a proxy and a tool that each decode once), each decoding
 * also in NFKC (`%EF%BC%8E%EF%BC%8E%EF%BC%8F` is `．．／`, then `../`) and decoded again from there within the
 * same three decodings ({@link compatDecodings}: `%EF%BC%85%32%65` is `％2e`, `%2e`, then `.`), the path of a `file:` URL (`file:///etc/passwd`, as an MCP resource is named),
 * each with `\` read as `/` (`..\..\etc\passwd`; a device path `\\?\C:\x` also as the path `C:/x` it names),
 * each without its path segments' parameters ({@link withoutParameters}: `/srv/files/..;/etc/passwd` is
 * `/srv/etc/passwd` to Tomcat), each without a scheme read as a URL ({@link schemelessUrls}:
 * `evil.example/x` is `https://evil.example/x`), each starting with `~` as the paths it expands to
 * ({@link homePaths}: `~/.ssh/id_rsa` is `/home/~/.ssh/id_rsa`, `~alice/.ssh` is `/home/alice/.ssh`), and
 * each starting with a home's environment reference so too ({@link homeReferenceAsTilde}: `$HOME/.ssh`,
 * `${HOME}/.ssh`, `%USERPROFILE%\.ssh`, `$env:USERPROFILE\.ssh` are `~/.ssh`), each
 * also without a trailing `/` (`/srv/secret/` names the directory `/srv/secret`), and each with its
 * domain names in ASCII ({@link asciiDomains}: `a@bücher.example` is `a@xn--bcher-kva.example`).
 */
export function respellings(text: string): string[] {
  const out = new Set<string>();
  const normal = normalizeValue(text);
  if (normal !== undefined) out.add(normal);
  const trimmed = text.replace(EDGES, "");
  if (respelledInFull(text)) {
    // the value as written, whose readings below are made as of every other spelling (`\t\srv\x` is
    // `\t/srv/x` with `/` for `\`, as well as `/srv/x` once trimmed); dropped from the spellings at the end
    out.add(text);
    // the value trimmed, and its NFKC form (`．．／` is `../` to a tool that normalises its input)
    const bases = [trimmed];
    if (NON_ASCII.test(trimmed)) {
      const nfkc = trimmed.normalize("NFKC");
      if (nfkc !== trimmed) bases.push(nfkc);
    }
    for (const base of bases) {
      out.add(base);
      out.add(normalizeValue(base) ?? base);
      const file = filePath(base);
      if (file !== undefined) out.add(file);
      if (!ESCAPE.test(base)) continue;
      if (!SCHEME.test(base)) {
        const decoded = decodeUnreserved(base);
        out.add(normalizePath(decoded) ?? decoded);
      }
      // every escape decoded, `%2f` too, as a server that decodes a path after routing reads it
      // (`/srv/files/..%2f..%2fetc/passwd` is `/etc/passwd`), and again, as a chain of readers each decoding
      // once does (`%252e%252e` is `%2e%2e`, then `..`)
      let normalises = false;
      for (const decoded of decodings(base)) {
        out.add(normalizeValue(decoded) ?? decoded);
        // and in NFKC, as a tool that decodes and then normalises its input reads it (`%EF%BC%8E` is `．`, then `.`)
        const nfkc = nfkcOf(decoded);
        if (nfkc !== undefined) out.add(normalizeValue(nfkc) ?? nfkc);
        normalises ||= nfkc !== undefined;
      }
      // and as a chain of such readers decodes it, each decoding its NFKC form (`%EF%BC%85%32%65` is `％2e`,
      // `%2e` in NFKC, then `.`): where a decoding has an NFKC form at all
      if (normalises) for (const form of compatDecodings(base, nfkcOf).forms) out.add(normalizeValue(form) ?? form);
    }
    // `\` as a separator, as a tool on Windows or a naive join reads it (`/srv/files/..\..\etc\passwd`,
    // `C:\Users\me\.ssh\id_rsa`), and a device path as the path it names (`\\?\C:\Users\me`)
    for (const form of [...out]) {
      if (!form.includes("\\")) continue;
      const slashed = form.replaceAll("\\", "/");
      out.add(normalizeValue(slashed) ?? slashed);
      const named = withoutDevicePrefix(slashed);
      if (named !== undefined) out.add(named).add(normalizeValue(named) ?? named);
    }
    // a path without its segments' parameters, as Tomcat reads `/srv/files/..;/etc/passwd`
    for (const form of [...out]) {
      const bare = withoutParameters(form);
      if (bare !== undefined) out.add(normalizeValue(bare) ?? bare);
    }
    for (const form of [...out]) for (const url of schemelessUrls(form)) out.add(url);
    // a home written as an environment reference (`$HOME/.ssh`, `%USERPROFILE%/.ssh`) as `~`, then as its homes
    for (const form of [...out]) {
      const tilde = homeReferenceAsTilde(form);
      if (tilde !== undefined) out.add(tilde);
    }
    // and a home inside it, after a word's start (`cat $HOME/.ssh/id_rsa`, `--key=~/.ssh/id_rsa`): as `~`, then as
    // each home it may be
    for (const form of [...out])
      for (const home of homesWithin(form, USER_HOME_ROOTS, ROOT_HOMES, SOME_USER)) out.add(home);
    for (const form of [...out]) for (const home of homePaths(form)) out.add(home);
    for (const form of [...out]) if (form.length > 1 && form.endsWith("/")) out.add(form.slice(0, -1));
    if (NON_ASCII.test(trimmed)) for (const form of [...out, text]) out.add(asciiDomains(form));
  }
  out.delete(text);
  return [...out];
}
