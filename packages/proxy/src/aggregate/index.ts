export { buildNameIndex, PREFIX_SEPARATOR, type NameIndex, type NamedListing, type NameTarget } from "./name-index.js";
export { ProxyCatalog, type NamedItem, type ResourceUnion } from "./catalog.js";
