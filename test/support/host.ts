/**
 * The whole laptop host for end-to-end tests: the real handlers behind the API Gateway emulation,
 * the SQS pollers, the emulators and the development OAuth2 server, on a free port with a fresh
 * temporary state directory and `koerier.local.json`.
 *
 *   const koerier = await startTestHost({ KOERIER_PUBLISH_RATE_PER_MINUTE: '60' });
 *   const token = await koerier.token('dev-publisher', ['events:publish']);
 *   await fetch(`${koerier.url}/events`, // koerier.url is the API's base URL, .../v1; { method: 'POST', headers: { authorization: `Bearer ${token}`, ... } });
 *   await koerier.stop();
 *
 * Start it in `beforeAll`, stop it in `afterAll`; several hosts may run side by side
 * (test/e2e/two-hosts.test.ts). `settings` are settings for the functions (names from
 * functions/config.ts `settingEnv`), applied on top of the host's own.
 *
 * The host itself never touches process.env. For the test's own convenience — AWS clients built
 * with `new SQSClient({})`, a function run in a child process with `env: process.env` — this
 * helper copies the host's `environment` (emulator endpoints, resource names, the functions'
 * settings) into process.env while the host runs and restores it on `stop`, unless
 * `exportEnvironment: false`. A test with two hosts reaches each through `host.awsClients` and
 * `host.environment` instead.
 *
 * With `KOERIER_RECORD_AWS_OPERATIONS` set (the emulated project sets it), every AWS call the
 * host's functions make is recorded for the permissions test (test/support/aws-operations-recorder.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingEnv } from '../../functions/config.js';
import { startKoerierHost, type KoerierHost, type KoerierHostOptions } from '../../local/host.js';
import { watchHost, withAwsOperationsRecording } from './aws-operations-recorder.js';
import { noteLogLine, noteTestSecret } from './log-scan.js';

export interface TestHost {
  readonly host: KoerierHost;
  /** Base URL of the API, with its major version: `http://127.0.0.1:41234/v1` (`host.apiUrl`). */
  readonly url: string;
  /**
   * The origin, `http://127.0.0.1:41234` (`host.url`): the well-known resources (RFC 8615), the
   * development token endpoint and `/health` live here, outside the versioned API.
   */
  readonly origin: string;
  /** The host's JSON log lines so far (requests, poller batches, function failures). */
  readonly logs: string[];
  /**
   * The URL of an API path as a test writes it (`/subscriptions`, under `url`) or as the API answers
   * with one (a `Location` or `next` link, `/v1/subscriptions/…`, already under the version).
   */
  resolve(path: string): string;
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
  options: Pick<KoerierHostOptions, 'queueTriggers' | 'batchingWindowSeconds' | 'batchSizes' | 'kms'> & {
    readonly exportEnvironment?: boolean;
    /**
     * A certificate authority the outbound functions trust (`settingEnv.outboundCaFile`), such as
     * test/support/https-receiver.ts's local one: its PEM goes into the host's own directory.
     */
    readonly trustAuthority?: { readonly certificatePem: string };
  } = {},
): Promise<TestHost> {
  const { exportEnvironment = true, trustAuthority, ...hostOptions } = options;
  const dir = await mkdtemp(join(tmpdir(), 'koerier-e2e-'));
  if (trustAuthority) {
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, trustAuthority.certificatePem);
    settings = { [settingEnv.outboundCaFile]: caFile, ...settings };
  }
  const logs: string[] = [];
  let host: KoerierHost;
  try {
    host = await startKoerierHost({
      port: 0,
      stateDir: join(dir, 'state'),
      configFile: join(dir, 'koerier.local.json'),
      settings,
      log: (line) => {
        logs.push(line);
        noteLogLine(line);
      },
      // The permissions record (test/support/aws-operations-recorder.ts), when the run asks for it.
      ...withAwsOperationsRecording(hostOptions),
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  watchHost(host);
  noteTestSecret(...Object.values(host.localConfig.clients).map((client) => client.secret));
  const restoreEnvironment = exportEnvironment ? useEnvironment(host.environment) : () => undefined;
  return {
    host,
    url: host.apiUrl,
    origin: host.url,
    logs,
    resolve: (path) => `${path.startsWith('/v1/') ? host.url : host.apiUrl}${path}`,
    async token(clientId = 'dev-publisher', scopes) {
      const client = host.localConfig.clients[clientId];
      if (!client)
        throw new Error(`${clientId} is not a client of koerier.local.json; use host.issueToken for other clients`);
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: client.secret,
      });
      if (scopes) form.set('scope', scopes.join(' '));
      const response = await fetch(`${host.url}/oauth/token`, { method: 'POST', body: form });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!response.ok || !body.access_token) {
        throw new Error(
          `token request for ${clientId} failed: ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`,
        );
      }
      return body.access_token;
    },
    async stop() {
      try {
        await host.stop();
      } finally {
        restoreEnvironment();
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

function useEnvironment(values: Readonly<Record<string, string>>): () => void {
  const previous = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
