/** The webhook consent channel: signed POSTs out, signed decision callbacks in. */
export { createWebhookChannel, type WebhookChannel, type WebhookChannelOptions } from "./webhook-channel.js";
export {
  signWebhookBody,
  webhookHeaders,
  checkWebhookSignature,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WEBHOOK_SIGNATURE_LABELS,
  type WebhookAuthFailure,
  type WebhookDirection,
} from "./hmac.js";
export { MAX_CALLBACK_BYTES, type WebhookCallbackBody } from "./callback.js";
export { webhookUrlWarning } from "./plain-url.js";
