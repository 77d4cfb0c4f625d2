/** Consent requests and responses of the consent protocol §4 (`ConsentRequestV02`, `ConsentResponseV02`). */
export * from "./types.js";
export {
  createConsentRequest,
  createRequestId,
  createNonce,
  type ConsentDeps,
  type ConsentRequestInput,
} from "./build.js";
export { validateConsentRequest, validateConsentResponse } from "./validate.js";
export { parseIsoTime } from "./fields.js";
export { timeLeft } from "./time-left.js";
