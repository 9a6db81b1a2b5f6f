/**
 * No KMS emulator exists, so on the laptop each key of functions/config/resources.ts is a file of 32 random
 * bytes (base64) under `<stateDir>/keys/<name>.key`, created on first start. The resource variable
 * of a key holds `local:<name>` and `settingEnv.localKeysDir` names the directory, so the key
 * adapter (functions/aws/credential-cipher.ts) can tell a laptop key from a KMS key and find it.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { list, settingEnv } from '../functions/config.js';
import { keys, type KeyName } from '../functions/config/resources.js';

export async function ensureLocalKeyFiles(stateDir: string): Promise<Record<string, string>> {
  const directory = join(stateDir, 'keys');
  await mkdir(directory, { recursive: true, mode: 0o700 });
  for (const name of Object.keys(keys) as KeyName[]) {
    try {
      await writeFile(join(directory, `${name}.key`), randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return { [settingEnv.localKeysDir]: directory };
}

/** The laptop's signing key, unless the settings name others (`settingEnv.signingKeys`). */
export const DEFAULT_LOCAL_SIGNING_KEYS = 'local:signing';

/**
 * Every `local:<name>` signing key the setting lists gets its Ed25519 key file
 * `<stateDir>/keys/<name>.pem` on first start, so a rotation on the laptop is: put a new name in
 * front of the list and restart (docs/OPERATIONS.md, "Signed deliveries").
 */
export async function ensureLocalSigningKeys(stateDir: string, setting: string | undefined): Promise<void> {
  const directory = join(stateDir, 'keys');
  await mkdir(directory, { recursive: true, mode: 0o700 });
  for (const reference of list(setting)) {
    if (!reference.startsWith('local:')) continue;
    const name = reference.slice('local:'.length);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      throw new Error(
        `${settingEnv.signingKeys}: a laptop key name is 1-64 letters, digits, - or _, not ${JSON.stringify(name)}`,
      );
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    try {
      await writeFile(join(directory, `${name}.pem`), pem, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
