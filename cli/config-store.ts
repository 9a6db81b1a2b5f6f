/**
 * What the CLI keeps between runs, in the user's config folder (`$XDG_CONFIG_HOME/koerier`, else
 * `~/.config/koerier`), private to the user (folder 0700, files 0600):
 *
 * - `config.json`: named profiles (`url`, `tokenUrl`, `clientId`), written by `koerier login`;
 * - `credentials.json`: the client secret `login` was given, per profile, so a token can be
 *   fetched again when the cached one is about to expire (client credentials have no refresh token);
 * - `tokens.json`: access tokens per token URL and client, with their expiry.
 *
 * Files are replaced whole (write to a temporary file, then rename), so a crash never leaves half a file.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Profile {
  readonly url?: string;
  readonly tokenUrl?: string;
  readonly clientId?: string;
}

export interface CachedToken {
  readonly accessToken: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

export function configDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] || join(homedir(), '.config');
  return join(base, 'koerier');
}

async function readJson<T>(path: string, empty: T): Promise<T> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw new Error(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
}

async function writePrivateJson(path: string, value: unknown): Promise<void> {
  const dir = join(path, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  // Unique per write: two CLI processes (or two writes of one) never share a temporary file.
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

export class ConfigStore {
  constructor(readonly dir: string) {}

  private get configFile() {
    return join(this.dir, 'config.json');
  }
  private get credentialsFile() {
    return join(this.dir, 'credentials.json');
  }
  private get tokensFile() {
    return join(this.dir, 'tokens.json');
  }

  async profile(name: string): Promise<Profile | undefined> {
    const config = await readJson<{ profiles?: Record<string, Profile> }>(this.configFile, {});
    return config.profiles?.[name];
  }

  async saveProfile(name: string, profile: Profile): Promise<void> {
    const config = await readJson<{ profiles?: Record<string, Profile> }>(this.configFile, {});
    await writePrivateJson(this.configFile, { ...config, profiles: { ...config.profiles, [name]: profile } });
  }

  /** The secret `login` stored for this profile, only if it was stored for the same client. */
  async secret(profile: string, clientId: string): Promise<string | undefined> {
    const secrets = await readJson<Record<string, { clientId?: string; clientSecret?: string }>>(
      this.credentialsFile,
      {},
    );
    const stored = secrets[profile];
    return stored?.clientId === clientId ? stored.clientSecret : undefined;
  }

  async saveSecret(profile: string, clientId: string, clientSecret: string | undefined): Promise<void> {
    const secrets = await readJson<Record<string, { clientId?: string; clientSecret?: string }>>(
      this.credentialsFile,
      {},
    );
    const { [profile]: _old, ...others } = secrets;
    await writePrivateJson(
      this.credentialsFile,
      clientSecret === undefined ? others : { ...others, [profile]: { clientId, clientSecret } },
    );
  }

  async token(key: string): Promise<CachedToken | undefined> {
    return (await readJson<Record<string, CachedToken>>(this.tokensFile, {}))[key];
  }

  async saveToken(key: string, token: CachedToken | undefined): Promise<void> {
    const tokens = await readJson<Record<string, CachedToken>>(this.tokensFile, {});
    const now = Date.now();
    // Expired tokens of other clients are dropped on the way: the file never grows without bound.
    const kept = Object.fromEntries(
      Object.entries(tokens).filter(([name, cached]) => name !== key && cached.expiresAt > now),
    );
    await writePrivateJson(this.tokensFile, token === undefined ? kept : { ...kept, [key]: token });
  }
}
