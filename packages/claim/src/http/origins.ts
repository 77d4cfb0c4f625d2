/** The separate surfaces (§16, §26), each its own host name, routed by the Host header. */
export type OriginKind = "api" | "preview" | "preview_admin" | "admin" | "pub";

/** Host names of the surfaces; published FAQs live at `{handle}.{pubSuffix}`. */
export interface ClaimHosts {
  readonly api: string;
  readonly preview: string;
  readonly previewAdmin: string;
  readonly admin: string;
  readonly pubSuffix: string;
}

/** With no configuration everything is under `*.localhost` (loopback, RFC 6761). */
export const DEFAULT_HOSTS: ClaimHosts = {
  api: "api.localhost",
  preview: "preview.localhost",
  previewAdmin: "preview-admin.localhost",
  admin: "admin.localhost",
  pubSuffix: "pub.localhost",
};

/** Which surface a Host header names (and the handle label for a published one), or undefined. */
export function classifyHost(
  hostHeader: string | undefined,
  hosts: ClaimHosts,
): { kind: OriginKind; handle?: string } | undefined {
  if (hostHeader === undefined) return undefined;
  const m = /^([a-z0-9.-]{1,253})(?::\d{1,5})?$/.exec(hostHeader.toLowerCase());
  const name = m?.[1];
  if (name === undefined) return undefined;
  if (name === hosts.api) return { kind: "api" };
  if (name === hosts.preview) return { kind: "preview" };
  if (name === hosts.previewAdmin) return { kind: "preview_admin" };
  if (name === hosts.admin) return { kind: "admin" };
  const suffix = `.${hosts.pubSuffix}`;
  if (name.endsWith(suffix)) {
    const label = name.slice(0, -suffix.length);
    if (!label.includes(".")) return { kind: "pub", handle: label };
  }
  return undefined;
}

/** The port part of a Host header (`:8080`), or "" when there is none. */
export function hostPort(hostHeader: string | undefined): string {
  const m = /:(\d{1,5})$/.exec(hostHeader ?? "");
  return m === null ? "" : `:${m[1]}`;
}
