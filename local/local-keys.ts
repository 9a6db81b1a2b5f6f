/**
 * No KMS emulator exists, so on the laptop each key of lib/resources.ts is a file of 32 random
 * bytes (base64) under `<stateDir>/keys/<name>.key`, created on first start. The resource variable
 * of a key holds `local:<name>` and `KOERIER_LOCAL_KEYS_DIR` names the directory, so the key
 * adapter can tell a laptop key from a KMS key id and find the material.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keys, type KeyName } from '../lib/resources.js';

export const LOCAL_KEYS_DIR_ENV = 'KOERIER_LOCAL_KEYS_DIR';

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
  return { [LOCAL_KEYS_DIR_ENV]: directory };
}
