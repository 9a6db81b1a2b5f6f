/**
 * No KMS emulator exists, so on the laptop each key of lib/resources.ts is a file of 32 random
 * bytes (base64) under `<stateDir>/keys/<name>.key`, created on first start. The resource variable
 * of a key holds `local:<name>` and `settingEnv.localKeysDir` names the directory, so the key
 * adapter (functions/aws/credential-cipher.ts) can tell a laptop key from a KMS key and find it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { settingEnv } from '../functions/config.js';
import { keys, type KeyName } from '../lib/resources.js';

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
