/** Credentials in tool calls: injection into an accepted call (redaction lives in `../redaction`). */
export {
  injectCredentials,
  type CredentialInjection,
  type CredentialTarget,
  type InjectedArguments,
} from "./inject.js";
