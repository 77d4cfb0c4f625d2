/** `$ACP_HOME`: its layout and modes, keys, config with comments kept, the vault file, permission checks. */
export { homePaths, HOME_DIR_MODE, HOME_FILE_MODE, type HomePaths } from "./paths.js";
export { writeFileAtomic, createFileExclusive } from "./atomic-write.js";
export { loadMemoryKey, MEMORY_KEY_BYTES } from "./memory-key.js";
export {
  readFileUpTo,
  FileTooOpenError,
  NOT_WRITABLE_BY_OTHERS,
  OWNER_ONLY,
  tooOpenMessage,
  type ReadUpToOptions,
} from "./read-up-to.js";
export { allowedOwners, FileNotOwnedError, notOwnedMessage, trustFileOwners } from "./owner.js";
export { configTemplate, STARTER_POLICY } from "./templates.js";
export { createHome, isExistingHome, type CreateHomeInput, type CreatedHome } from "./create-home.js";
export { liveHomeWriters, homeInUseMessage, type HomeWriter } from "./live-writers.js";
export { readPublicKeyHex, readPrivateKeyFile, loadMasterSeed } from "./keys.js";
export { readVault, writeVault, MAX_VAULT_BYTES } from "./vault-store.js";
export {
  readConfigDocument,
  readConfigDocumentAt,
  writeConfigValue,
  readConfigSecret,
  checkConfigSecretSealed,
  CONFIG_PATH_PATTERN,
  MAX_CONFIG_BYTES,
} from "./config-file.js";
export { checkHomePermissions, type HomeCheck } from "./permissions.js";
