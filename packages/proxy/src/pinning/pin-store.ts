import { chmod, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { HOME_DIR_MODE, readFileUpTo, writeFileAtomic } from "@acp/store";

/**
 * What is remembered of one tool definition the first time it is seen (or last accepted). Pins written
 * before every field was pinned have only `name`, `description`, `input_schema_hash` and `pinned_at`; they
 * are still read, and get the rest recorded when the tool is next seen unchanged.
 */
export interface ToolPin {
  readonly name: string;
  readonly description: string | null;
  /** `sha256:` of the canonical JSON of the tool's `inputSchema`. */
  readonly input_schema_hash: string;
  /**
   * `sha256:` of the canonical JSON of each field of the definition but `name` (`description`, `title`,
   * `inputSchema`, `outputSchema`, `annotations`, `_meta`, …), by field. Absent in an old-format pin.
   */
  readonly field_hashes?: Readonly<Record<string, string>>;
  /**
   * The definition itself, every field but `name` (what a held tool is served and decided with). Absent in
   * an old-format pin and when the definition is over 64 KiB (then only the hashes are kept).
   */
  readonly definition?: Readonly<Record<string, unknown>>;
  /** ISO-8601 time the definition was pinned (first seen or last accepted). */
  readonly pinned_at: string;
}

/** Where pins live: one record per server and tool. */
export interface PinStore {
  /** The pins of one server, by tool name (empty when the server was never seen). */
  load(server: string): Promise<ReadonlyMap<string, ToolPin>>;
  /** Adds or replaces pins of one server. */
  save(server: string, pins: readonly ToolPin[]): Promise<void>;
}

/** A pin store in memory (tests; `--no-pins`). */
export function createMemoryPinStore(): PinStore {
  const servers = new Map<string, Map<string, ToolPin>>();
  return {
    load: (server) => Promise.resolve(new Map(servers.get(server) ?? [])),
    save: (server, pins) => {
      const map = servers.get(server) ?? new Map<string, ToolPin>();
      for (const pin of pins) map.set(pin.name, pin);
      servers.set(server, map);
      return Promise.resolve();
    },
  };
}

interface PinFileV1 {
  readonly version: 1;
  readonly servers: Record<string, Record<string, ToolPin>>;
}

/** Largest pins.json read: far more than the pins of every tool of many servers. */
export const MAX_PIN_FILE_BYTES = 16 * 1024 * 1024;

/**
 * A pin store in one JSON file (`$ACP_HOME/pins.json`), written atomically (temp file + rename) and
 * serialised within the process. A file that does not parse is an error, never silently reset: a reset
 * would forget every pin and let a changed tool through.
 */
export function createFilePinStore(path: string): PinStore {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const read = async (): Promise<PinFileV1> => {
    let bytes: Buffer | undefined;
    try {
      // a regular file of bounded size: a pipe or /dev/zero planted as pins.json must not hang or fill memory
      bytes = readFileUpTo(path, MAX_PIN_FILE_BYTES, { regularOnly: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return Promise.resolve({ version: 1, servers: {} });
      throw new Error(`${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (bytes === undefined) throw new Error(`${path}: larger than ${MAX_PIN_FILE_BYTES} bytes, not a pin file`);
    const text = bytes.toString("utf8");
    const parsed: unknown = JSON.parse(text);
    if (!isPinFile(parsed)) throw new Error(`${path}: not a pin file (expected {"version": 1, "servers": {…}})`);
    return parsed;
  };
  return {
    load: (server) => serial(async () => new Map(Object.entries(serverPins(await read(), server)))),
    save: (server, pins) =>
      serial(async () => {
        const file = await read();
        // a Map, then fromEntries: a tool named `__proto__` is pinned like any other (an assignment would drop it)
        const entries = new Map(Object.entries(serverPins(file, server)));
        for (const pin of pins) entries.set(pin.name, pin);
        const next: PinFileV1 = { version: 1, servers: { ...file.servers, [server]: Object.fromEntries(entries) } };
        // a home made here is made as `acp init` makes one: 0700 whatever the umask (an existing one is left as it is)
        const home = dirname(path);
        if ((await mkdir(home, { recursive: true, mode: HOME_DIR_MODE })) !== undefined)
          await chmod(home, HOME_DIR_MODE);
        // a temporary file of a random name, created exclusively without following a planted link, then renamed
        writeFileAtomic(path, `${JSON.stringify(next, null, 2)}\n`, 0o600);
      }),
  };
}

/** The pins of one server in the file (own entries only: a server named `constructor` has none until pinned). */
function serverPins(file: PinFileV1, server: string): Record<string, ToolPin> {
  return Object.hasOwn(file.servers, server) ? (file.servers[server] ?? {}) : {};
}

function isPinFile(value: unknown): value is PinFileV1 {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return v["version"] === 1 && typeof v["servers"] === "object" && v["servers"] !== null;
}
