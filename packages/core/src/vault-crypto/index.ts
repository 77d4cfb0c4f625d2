/** The vault's cryptography (§2.3): AES-256-GCM under HKDF keys from the master key; scrypt-wrapped private key. */
export { deriveKeyFromMaster, aesGcmSeal, aesGcmOpen, type RandomBytes, type Sealed } from "./aead.js";
export {
  sealVault,
  openVault,
  isVaultName,
  VAULT_NAME_PATTERN,
  VAULT_KEY_INFO,
  type VaultFileV1,
  type VaultEntries,
} from "./vault-file.js";
export {
  sealConfigSecret,
  openConfigSecret,
  isSealedSecret,
  readNamedSecrets,
  type NamedSecrets,
  SEALED_SECRET_PREFIX,
  CONFIG_SECRET_KEY_INFO,
} from "./config-secret.js";
export {
  wrapPrivateKey,
  unwrapPrivateKey,
  parsePrivateKeyFile,
  DEFAULT_SCRYPT_PARAMS,
  SCRYPT_BOUNDS,
  SCRYPT_FLOOR,
  SCRYPT_MAX_MEMORY,
  checkScryptParams,
  type ScryptParams,
  type PrivateKeyFileV1,
  type EncryptedPrivateKeyFileV1,
  type PlainPrivateKeyFileV1,
} from "./private-key-file.js";
