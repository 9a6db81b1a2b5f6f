/**
 * `koerier.local.json`: the laptop host's development clients and grants. Created on first start
 * when absent; never deployed, never committed (it holds secrets).
 *
 * Format:
 * {
 *   "clients": {                                  // confidential OAuth2 clients of the dev token endpoint
 *     "<client id>": { "secret": "<string>", "scopes": ["events:publish", ...] }
 *   },
 *   "entitlements": {                             // who may subscribe to what (KOERIER_ENTITLEMENTS)
 *     "<client id>": [ { "typePrefix": "<prefix of the event type, '' = every type>",
 *                        "source": "<optional: only events from this exact source>" } ]
 *   },
 *   "validationAgreedClients": ["<client id>"]   // subscribers whose webhooks skip the validation
 *                                                // handshake, agreed out of band (WH-5)
 * }
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { scopes } from '../functions/core/auth/access-tokens.js';

/** Every scope Koerier's routes ask for; the development clients get them all. */
export const ALL_SCOPES: readonly string[] = Object.values(scopes);

export interface DevClientConfig {
  readonly secret: string;
  readonly scopes: readonly string[];
}

export interface Entitlement {
  readonly typePrefix: string;
  readonly source?: string;
}

export interface LocalConfig {
  readonly clients: Readonly<Record<string, DevClientConfig>>;
  readonly entitlements: Readonly<Record<string, readonly Entitlement[]>>;
  readonly validationAgreedClients: readonly string[];
}

export function defaultLocalConfig(): LocalConfig {
  const client = (): DevClientConfig => ({ secret: randomBytes(24).toString('base64url'), scopes: [...ALL_SCOPES] });
  return {
    clients: { 'dev-publisher': client(), 'dev-subscriber': client() },
    entitlements: { 'dev-subscriber': [{ typePrefix: '' }] },
    validationAgreedClients: [],
  };
}

/** Reads the file, or writes a fresh default one (mode 0600) when it does not exist yet. */
export async function loadOrCreateLocalConfig(path: string): Promise<{ config: LocalConfig; created: boolean }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const config = defaultLocalConfig();
    await writeFile(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    return { config, created: true };
  }
  return { config: parseLocalConfig(text, path), created: false };
}

export function parseLocalConfig(text: string, path: string): LocalConfig {
  const fail = (why: string): never => {
    throw new Error(`${path} is not a valid Koerier local configuration: ${why} (delete it to get a fresh one)`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  if (!isObject(raw)) return fail('the top level must be an object');
  const clients: Record<string, DevClientConfig> = {};
  if (!isObject(raw['clients'])) return fail('"clients" must be an object');
  for (const [id, client] of Object.entries(raw['clients'])) {
    if (!isObject(client) || typeof client['secret'] !== 'string' || client['secret'].length < 8) {
      return fail(`client "${id}" needs a "secret" of at least 8 characters`);
    }
    const scopes = client['scopes'];
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) {
      return fail(`client "${id}" needs "scopes", a list of scope tokens`);
    }
    clients[id] = { secret: client['secret'], scopes };
  }
  const entitlements: Record<string, Entitlement[]> = {};
  const rawEntitlements = raw['entitlements'] ?? {};
  if (!isObject(rawEntitlements)) return fail('"entitlements" must be an object');
  for (const [id, grants] of Object.entries(rawEntitlements)) {
    if (!Array.isArray(grants)) return fail(`entitlements of "${id}" must be a list`);
    entitlements[id] = grants.map((grant): Entitlement => {
      if (!isObject(grant) || typeof grant['typePrefix'] !== 'string') return fail(`each entitlement of "${id}" needs a "typePrefix" string`);
      if (grant['source'] !== undefined && typeof grant['source'] !== 'string') return fail(`"source" of an entitlement of "${id}" must be a string`);
      return { typePrefix: grant['typePrefix'], ...(typeof grant['source'] === 'string' ? { source: grant['source'] } : {}) };
    });
  }
  const agreed = raw['validationAgreedClients'] ?? [];
  if (!Array.isArray(agreed) || !agreed.every((id) => typeof id === 'string')) return fail('"validationAgreedClients" must be a list of client ids');
  return { clients, entitlements, validationAgreedClients: agreed };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
