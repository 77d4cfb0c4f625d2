/**
 * The answers the app gives on every route whatever the route declares (the Host and Origin check, a body
 * refused before it is parsed, an internal error), added to each operation of the OpenAPI document in one
 * place: the `transform` of `@fastify/swagger`. The document only: the answers themselves are made by the
 * app-wide hooks and the error handler, and the routes' own schemas are left as they are.
 */
import type { FastifySchema } from "fastify";
import { ERROR_BODY_SCHEMA } from "./error-body.js";

const DESCRIPTION = "x-response-description";

/** The error body with what a status means on every route. */
function errorAnswer(description: string): typeof ERROR_BODY_SCHEMA & { readonly [DESCRIPTION]: string } {
  return { ...ERROR_BODY_SCHEMA, [DESCRIPTION]: description };
}

/** Answers of every operation: the loopback listener's Host and Origin check, and an internal error. */
export const APP_WIDE_RESPONSES = {
  403: errorAnswer(
    "origin_not_allowed: a loopback service answers no browser page of another site (nor an `Origin: null` one)",
  ),
  421: errorAnswer(
    "host_not_allowed: a loopback service answers only requests addressed to a loopback host or the public URL's host",
  ),
  500: errorAnswer("internal_error: a failure of the service itself (the cause is in the service log)"),
} as const;

/** Answers of every operation that reads a body (all but GET and HEAD), whether or not it takes one. */
export const BODY_RESPONSES = {
  413: errorAnswer("body_too_large: the body is larger than the limit (1 MiB unless configured)"),
  415: errorAnswer("unsupported_media_type: the body is not application/json"),
} as const;

type Schema = Readonly<Record<string, unknown>>;

/** The description a route gives an answer of its own (its `x-response-description` or `description`). */
function describedAs(schema: unknown): string | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const own = (schema as Schema)[DESCRIPTION] ?? (schema as Schema)["description"];
  return typeof own === "string" ? own : undefined;
}

/**
 * The route's answers with the app-wide ones added: a status the route declares keeps its schema, and its
 * description names the app-wide answer as well (a route's own 403 is also `origin_not_allowed`).
 */
export function withAppWideResponses(response: Schema | undefined, methods: readonly string[]): Schema {
  const readsBody = methods.some((method) => method !== "GET" && method !== "HEAD");
  const added: Schema = { ...APP_WIDE_RESPONSES, ...(readsBody ? BODY_RESPONSES : {}) };
  const out: Record<string, unknown> = { ...response };
  for (const [status, answer] of Object.entries(added)) {
    const own = out[status];
    if (own === undefined) {
      out[status] = answer;
      continue;
    }
    const mine = describedAs(answer) ?? "";
    const theirs = describedAs(own);
    out[status] = { ...(own as Schema), [DESCRIPTION]: theirs === undefined ? mine : `${theirs}; or ${mine}` };
  }
  return out;
}

/** What `@fastify/swagger` hands its `transform`, in the part used here. */
interface TransformInput {
  readonly schema: FastifySchema;
  readonly url: string;
  readonly route: { readonly method: string | readonly string[] };
}

/**
 * The `transform` of `@fastify/swagger`: every operation the document shows declares the app-wide answers.
 * A hidden route is left alone.
 */
export function declareAppWideResponses({ schema, url, route }: TransformInput): {
  schema: FastifySchema;
  url: string;
} {
  if ((schema as Schema | undefined)?.["hide"] === true) return { schema, url };
  const methods = typeof route.method === "string" ? [route.method] : route.method;
  const response = schema?.response as Schema | undefined;
  return { schema: { ...schema, response: withAppWideResponses(response, methods) }, url };
}
