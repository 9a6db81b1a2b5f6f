/**
 * The whole laptop host for end-to-end tests: the real handlers behind the API Gateway emulation,
 * the SQS pollers, the emulators and the development OAuth2 server, on a free port with a fresh
 * temporary state directory and `koerier.local.json`.
 *
 *   const koerier = await startTestHost({ KOERIER_PUBLISH_RATE_PER_MINUTE: '60' });
 *   const token = await koerier.token('dev-publisher', ['events:publish']);
 *   await fetch(`${koerier.url}/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ... } });
 *   await koerier.stop();
 *
 * One host per test file (per process): start it in `beforeAll`, stop it in `afterAll`. The
 * handlers read their configuration once, so a second host in the same process is refused.
 * `settings` are environment settings for the handlers (names from functions/config.ts
 * `settingEnv`, or any other), applied on top of the host's own.
 * AWS clients of a test reach the same emulators with `koerier.host.emulators` (endpoints,
 * `awsEnvironment`, `resourceEnvironment`); while the host runs, process.env carries them too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKoerierHost, type KoerierHost, type KoerierHostOptions } from '../../local/host.js';

export interface TestHost {
  readonly host: KoerierHost;
  /** Base URL of the API, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The host's JSON log lines so far (requests, poller batches, function failures). */
  readonly logs: string[];
  /**
   * An access token from the real `POST /oauth/token` (client_secret_post) for a client of
   * `koerier.local.json` (`dev-publisher` or `dev-subscriber`), with all its scopes or `scopes`.
   * For any other client id, or a token with scopes no client has, use `host.issueToken`.
   */
  token(clientId?: string, scopes?: readonly string[]): Promise<string>;
  /** Stops the host and removes its temporary directory. */
  stop(): Promise<void>;
}

export async function startTestHost(
  settings: Record<string, string> = {},
  options: Pick<KoerierHostOptions, 'queueTriggers'> = {},
): Promise<TestHost> {
  const dir = await mkdtemp(join(tmpdir(), 'koerier-e2e-'));
  const logs: string[] = [];
  let host: KoerierHost;
  try {
    host = await startKoerierHost({
      port: 0,
      stateDir: join(dir, 'state'),
      configFile: join(dir, 'koerier.local.json'),
      settings,
      log: (line) => logs.push(line),
      ...options,
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    host,
    url: host.url,
    logs,
    async token(clientId = 'dev-publisher', scopes) {
      const client = host.localConfig.clients[clientId];
      if (!client) throw new Error(`${clientId} is not a client of koerier.local.json; use host.issueToken for other clients`);
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: client.secret });
      if (scopes) form.set('scope', scopes.join(' '));
      const response = await fetch(`${host.url}/oauth/token`, { method: 'POST', body: form });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!response.ok || !body.access_token) {
        throw new Error(`token request for ${clientId} failed: ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`);
      }
      return body.access_token;
    },
    async stop() {
      try {
        await host.stop();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
