/** Credentials in tool calls: injection into an accepted call's arguments, and redaction everywhere else. */
export {
  injectCredentials,
  type CredentialInjection,
  type CredentialTarget,
  type InjectedArguments,
} from "./inject.js";
export { redactSecrets, REDACTED, DEFAULT_REDACTION_PATTERNS, type RedactionPatterns } from "./redact.js";
