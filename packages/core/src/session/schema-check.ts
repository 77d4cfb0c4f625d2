/**
 * JSON Schema checks of intents and plans with ajv (compiled once per schema), turning ajv's errors into
 * house-style issues with paths.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { Issue } from "../issues/index.js";
import { quoteValue } from "./errors.js";

/** At most this many schema issues are reported for one document. */
export const MAX_SCHEMA_ISSUES = 50;

const compiled = new Map<object, ValidateFunction>();

function validatorFor(schema: { readonly [key: string]: unknown }): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part) => (/^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : part));
}

function describeError(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "additionalProperties":
      return `unknown field ${quoteValue(params["additionalProperty"])}`;
    case "required":
      return `missing field ${quoteValue(params["missingProperty"])}`;
    case "type":
      return `must be ${String(params["type"])}`;
    case "oneOf":
      return "must be exactly one of `{exact}`, `{glob}`, `{one_of}` or `{from_trusted}`";
    case "propertyNames":
      return `has an invalid name ${quoteValue(params["propertyName"])}`;
    default:
      return (error.message ?? "is invalid").toLowerCase();
  }
}

/** Drops errors that only explain a failed `oneOf` branch or a bad property name (the parent error says it). */
function relevant(errors: readonly ErrorObject[]): ErrorObject[] {
  const umbrellas = errors.filter((e) => e.keyword === "oneOf" || e.keyword === "propertyNames");
  return errors.filter((e) => {
    if (e.keyword === "oneOf" || e.keyword === "propertyNames") return true;
    return !umbrellas.some(
      (u) =>
        e.schemaPath.startsWith(u.schemaPath.replace(/\/(oneOf|propertyNames)$/, "/$1/")) &&
        e.instancePath.startsWith(u.instancePath),
    );
  });
}

/** Checks a value against a schema; returns issues with `code`, paths and messages (empty when valid). */
export function checkAgainstSchema(
  schema: { readonly [key: string]: unknown },
  value: unknown,
  code: string,
  what: string,
): Issue[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  const errors = relevant(validate.errors ?? []);
  const issues: Issue[] = errors.slice(0, MAX_SCHEMA_ISSUES).map((error) => {
    const path = pointerToPath(error.instancePath);
    const where = path.length === 0 ? what : `${what} at \`${path.join(".")}\``;
    return { code, path, message: `${where}: ${describeError(error)}` };
  });
  if (errors.length > MAX_SCHEMA_ISSUES) {
    issues.push({ code, path: [], message: `${what}: ${errors.length - MAX_SCHEMA_ISSUES} more problems not shown` });
  }
  return issues;
}
