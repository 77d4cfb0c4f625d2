export {
  buildNameIndex,
  PREFIX_SEPARATOR,
  PROXY_ITSELF,
  type NameIndex,
  type NamedListing,
  type NameTarget,
} from "./name-index.js";
export { ProxyCatalog, type NamedItem, type ResourceUnion } from "./catalog.js";
export { MAX_ITEM_NAME, whyItemNameRefused, whyPromptRefused, whyTitleRefused } from "./item-name.js";
export { findHiddenText, whyTextHidden } from "./hidden-text.js";
export { MAX_RESOURCE_NAME, MAX_RESOURCE_URI, whyResourceRefused, whyUriRefused } from "./resource-name.js";
