import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { yamlErrorText } from "@acp/core";
import {
  ADMISSION_MODES,
  openClaimPostgres,
  parseAdmissionConfig,
  type AdmissionMode,
  type AdmissionPolicyOptions,
} from "@acp/claim";
import { FileTooOpenError, OWNER_ONLY, readConfigDocumentAt, readFileUpTo, tooOpenMessage } from "@acp/store";
import { resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { readFailure } from "../decision/read-input.js";
import { configDirectoryError } from "../wiring/config-file.js";

/**
 * The claim config of `acp claim serve`: `--config FILE`, else `$ACP_HOME/claim/config.yml` when it exists, else
 * none (defaults). `--admission MODE` overrides `admission.mode`. Any problem is exit 4 listing every issue.
 */
export function loadClaimConfig(
  ctx: CliContext,
  home: string,
  flags: { config?: string; admission?: string },
): AdmissionPolicyOptions {
  const path = flags.config !== undefined ? resolvePath(ctx.io, flags.config) : join(home, "claim", "config.yml");
  let doc: unknown = {};
  if (flags.config !== undefined || existsSync(path)) doc = readClaimConfigValues(path, flags.config !== undefined);
  const parsed = parseAdmissionConfig(doc);
  if (!parsed.ok)
    throw new CliError(parsed.issues.map((i) => `${path}: ${i.path}: ${i.message}`).join("\n"), EXIT.invalid);
  if (flags.admission === undefined) return parsed.value;
  if (!ADMISSION_MODES.includes(flags.admission as AdmissionMode))
    throw new CliError(
      `--admission: unknown mode \`${flags.admission}\` (expected ${ADMISSION_MODES.join(", ")})`,
      EXIT.usage,
    );
  if (flags.admission === "issuer-required" && (parsed.value.issuers ?? []).length === 0)
    throw new CliError(
      `--admission issuer-required needs a trusted issuer in \`${path}\` (admission.issuers; see acp claim issuer keygen)`,
      EXIT.usage,
    );
  return { ...parsed.value, mode: flags.admission as AdmissionMode };
}

/**
 * The claim config's values, read as every config file is (the store's readConfigDocumentAt: at most 1 MiB, so
 * `/dev/zero` or an endless pipe is refused, not read until memory runs out; unique keys; `FILE:LINE:COL`).
 * A directory names the file to give instead (exit 1).
 */
function readClaimConfigValues(path: string, named: boolean): unknown {
  if (named && isDirectory(path))
    throw configDirectoryError(
      path,
      join("claim", "config.yml"),
      "the claim config, default $ACP_HOME/claim/config.yml",
    );
  const read = readConfigDocumentAt(path);
  if (!read.ok) {
    const code = read.issues[0]?.code;
    const unreadable = code === "config_missing" || code === "config_unreadable";
    throw new CliError(read.issues.map((i) => i.message).join("; "), unreadable ? EXIT.error : EXIT.invalid);
  }
  try {
    return read.value.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw new CliError(yamlErrorText(path, err), EXIT.invalid);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The admission token an agent command sends: `--admission-token FILE`, else `$ACP_CLAIM_ADMISSION_TOKEN`. */
export function admissionTokenOf(ctx: CliContext, file: string | undefined): string | undefined {
  if (file === undefined) {
    const env = ctx.io.env["ACP_CLAIM_ADMISSION_TOKEN"];
    return env === undefined || env.trim() === "" ? undefined : env.trim();
  }
  let text: string;
  try {
    text = readFileSync(resolvePath(ctx.io, file), "utf8").trim();
  } catch (err) {
    throw new CliError(`cannot read \`${file}\`: ${readFailure(err)}`, EXIT.error);
  }
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text))
    throw new CliError(`\`${file}\`: not an admission token (header.payload.signature)`, EXIT.invalid);
  return text;
}

/** The provider key in `$ACP_HOME/claim/provider.key` (created, mode 0600, on first use): for `acp claim serve`. */
export function providerKey(home: string): Buffer {
  const dir = join(home, "claim");
  const path = join(dir, "provider.key");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) writeFileSync(path, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  return readProviderKey(home);
}

/**
 * The provider key a running provider made, for operator commands that must find what it stored (a handle is
 * looked up by its keyed hash): never created here, since a new key finds nothing.
 */
export function readProviderKey(home: string): Buffer {
  const path = join(home, "claim", "provider.key");
  let text: string;
  try {
    // A secret, read as the home's other secrets: a regular file, closed to group and others, at most 1 KB.
    text = readFileUpTo(path, 1024, { regularOnly: true, refuseMode: OWNER_ONLY })?.toString("utf8") ?? "";
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      throw new CliError(
        `no provider key at \`${path}\`: run it with the provider's ACP_HOME (the one \`acp claim serve\` uses)`,
        EXIT.error,
      );
    if (err instanceof FileTooOpenError)
      throw new CliError(
        tooOpenMessage(err, "whoever can read it can sign proof-of-work challenges and match every stored secret"),
        EXIT.error,
      );
    throw new CliError(`cannot read \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new CliError(`\`${path}\`: expected 64 hex characters`, EXIT.invalid);
  return Buffer.from(hex, "hex");
}

/** Opens the claim tables on PostgreSQL; a failure names where the URL came from. */
export async function openPostgres(
  url: string,
  source: string,
): Promise<Awaited<ReturnType<typeof openClaimPostgres>>> {
  try {
    return await openClaimPostgres(url);
  } catch (err) {
    throw new CliError(`${source}: ${err instanceof Error ? err.message : String(err)}`, EXIT.error);
  }
}
