/**
 * The normal form of a path or URL argument: what a server reads a value as, which an `ask` or `deny`
 * rule's glob is also tried on (`/home/me//.ssh/id_rsa` is `/home/me/.ssh/id_rsa`).
 */

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
function decodeUnreserved(path: string): string {
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
