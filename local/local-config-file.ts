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
 *   "publishers": {                               // who may publish under which sources (KOERIER_PUBLISHERS)
 *     "<client id>": ["<source grant, '' = every source>", ...]
 *   },                                            // whole segments, and no two clients' grants may overlap
 *                                                 // (functions/core/auth/publish-grants.ts); absent (files from
 *                                                 // before it existed): allowed for a file with one client only,
 *                                                 // who may then publish under every source
 *   "validationAgreedClients": ["<client id>"],  // subscribers whose webhooks skip the validation
 *                                                // handshake, agreed out of band (WH-5)
 *   "validationHandshake": "required"            // optional: or "agreed-for-directory-partners", as an
 *                                                // Edukoppeling deployment has it (KOERIER_VALIDATION_HANDSHAKE)
 * }
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { scopes } from '../functions/core/auth/access-tokens.js';
import { parsePublishGrants, type PublishGrants } from '../functions/core/auth/publish-grants.js';
import { parseEntitlements, type Grant } from '../functions/core/subscriptions/entitlements.js';
import {
  VALIDATION_HANDSHAKE_CHOICES,
  validationHandshakeOf,
  type ValidationHandshakePolicy,
} from '../functions/core/webhooks/handshake-policy.js';

/** Every scope Koerier's routes ask for; the development clients get them all. */
export const ALL_SCOPES: readonly string[] = Object.values(scopes);

export interface DevClientConfig {
  readonly secret: string;
  readonly scopes: readonly string[];
}

export interface LocalConfig {
  readonly clients: Readonly<Record<string, DevClientConfig>>;
  readonly entitlements: Readonly<Record<string, readonly Grant[]>>;
  readonly publishers: PublishGrants;
  readonly validationAgreedClients: readonly string[];
  /** Absent: the functions' default, `required` (functions/core/webhooks/handshake-policy.ts). */
  readonly validationHandshake?: ValidationHandshakePolicy;
}

export function defaultLocalConfig(): LocalConfig {
  const client = (): DevClientConfig => ({ secret: randomBytes(24).toString('base64url'), scopes: [...ALL_SCOPES] });
  return {
    clients: { 'dev-publisher': client(), 'dev-subscriber': client() },
    entitlements: { 'dev-subscriber': [{ typePrefix: '' }] },
    // One publisher for every source: grants of two clients may not overlap (review #15).
    publishers: { 'dev-publisher': [''], 'dev-subscriber': [] },
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
    if (
      !Array.isArray(scopes) ||
      !scopes.every((scope) => typeof scope === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
    ) {
      return fail(`client "${id}" needs "scopes", a list of scope tokens`);
    }
    clients[id] = { secret: client['secret'], scopes };
  }
  if (raw['publishers'] === undefined && Object.keys(clients).length > 1) {
    return fail(
      'it has no "publishers" section, and with more than one client every client publishing everywhere would overlap; ' +
        'add one, e.g. "publishers": {"dev-publisher": [""]}',
    );
  }
  // The very parsers the functions use, so the file is refused here rather than at the first request.
  let entitlements: Record<string, readonly Grant[]>;
  let publishers: PublishGrants;
  try {
    entitlements = Object.fromEntries(parseEntitlements(JSON.stringify(raw['entitlements'] ?? {})));
    publishers =
      raw['publishers'] === undefined
        ? everyoneEverywhere(Object.keys(clients))
        : parsePublishGrants(JSON.stringify(raw['publishers']));
  } catch (error) {
    return fail((error as Error).message);
  }
  const agreed = raw['validationAgreedClients'] ?? [];
  if (!Array.isArray(agreed) || !agreed.every((id) => typeof id === 'string'))
    return fail('"validationAgreedClients" must be a list of client ids');
  const handshakeRaw = raw['validationHandshake'];
  const validationHandshake = typeof handshakeRaw === 'string' ? validationHandshakeOf(handshakeRaw) : undefined;
  if (handshakeRaw !== undefined && validationHandshake === undefined) {
    return fail(`"validationHandshake" must be ${VALIDATION_HANDSHAKE_CHOICES}, got ${JSON.stringify(handshakeRaw)}`);
  }
  return {
    clients,
    entitlements,
    publishers,
    validationAgreedClients: agreed,
    ...(validationHandshake ? { validationHandshake } : {}),
  };
}

/** A one-client file from before `publishers` existed keeps working: its client may publish under every source. */
function everyoneEverywhere(clientIds: readonly string[]): PublishGrants {
  return Object.fromEntries(clientIds.map((id) => [id, ['']]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
