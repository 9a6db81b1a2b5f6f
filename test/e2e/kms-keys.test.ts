/**
 * The laptop host as close to a deployment as it gets (issue 27 §2): each function on adapters and
 * SDK clients of its own (`functionContainers`, as each Lambda function has containers of its own),
 * and every key a KMS key — the sink-credential key, the lock-token key and the delivery-signing
 * key are KMS key ARNs answered by a stand-in KMS over HTTP (test/support/kms-stand-in.ts), so the
 * KMS adapters run exactly as in AWS, through the SDK's KMS client.
 *
 * What it shows: the subscriptions function seals a sink credential with kms:Encrypt, the delivery
 * function opens it with kms:Decrypt and signs with kms:Sign a delivery that verifies with the key
 * the signingKeys function publishes (kms:GetPublicKey); the pull function wraps its lock-token key
 * with kms:Encrypt once and, after a restart (a new container), unwraps it with kms:Decrypt. And,
 * with the permissions record on (the emulated project), what every function asks of KMS and of the
 * other services from a cold container of its own, where no other function has filled a cache for
 * it: the record test/infra/function-permissions.test.ts holds the template's grants to.
 */
import { createPublicKey, randomUUID, type JsonWebKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createVerifier, httpbis, type VerifyingKey } from 'http-message-signatures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, callApi, publishEvent } from '../support/koerier-api.js';
import { createKmsClient } from '../../functions/aws/clients.js';
import { settingEnv } from '../../functions/config.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { LOCAL_REGION } from '../../local/emulators.js';
import { startKoerierHost, type KoerierHost } from '../../local/host.js';
import { laptopKmsKeyArn } from '../support/aws-operations.js';
import { watchHost, withAwsOperationsRecording } from '../support/aws-operations-recorder.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type RecordedRequest,
} from '../support/https-receiver.js';
import { startKmsStandIn, type KmsStandIn } from '../support/kms-stand-in.js';
import { noteLogLine, noteTestSecret } from '../support/log-scan.js';

const CREDENTIALS_KEY = laptopKmsKeyArn('credentials');
const LOCK_TOKENS_KEY = laptopKmsKeyArn('lockTokens');
const SIGNING_KEY = laptopKmsKeyArn('signing');
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:kms';
const DIRECTORY = '/.well-known/http-message-signatures-directory';

const authority = createLocalCertificateAuthority();
let dir: string;
let kms: KmsStandIn;
let host: KoerierHost;
const logs: string[] = [];
const receivers: HttpsReceiver[] = [];

async function start(): Promise<KoerierHost> {
  const started = await startKoerierHost(
    withAwsOperationsRecording({
      port: 0,
      stateDir: join(dir, 'state'),
      configFile: join(dir, 'koerier.local.json'),
      log: (line: string) => {
        logs.push(line);
        noteLogLine(line);
      },
      settings: {
        [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
        [settingEnv.validationAgreedClients]: 'dev-subscriber',
        [resourceEnv.key('credentials')]: CREDENTIALS_KEY,
        [resourceEnv.key('lockTokens')]: LOCK_TOKENS_KEY,
        [settingEnv.signingKeys]: SIGNING_KEY,
      },
      functionContainers: true,
      kms: () =>
        createKmsClient({
          region: LOCAL_REGION,
          endpoint: kms.endpoint,
          credentials: { accessKeyId: 'AKIDKMSSTANDIN', secretAccessKey: 'kms-stand-in' },
        }),
    }),
  );
  watchHost(started);
  noteTestSecret(...Object.values(started.localConfig.clients).map((client) => client.secret));
  return started;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-kms-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  kms = await startKmsStandIn({ symmetric: [CREDENTIALS_KEY, LOCK_TOKENS_KEY], signing: [SIGNING_KEY] });
  host = await start();
});

afterAll(async () => {
  await host?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await kms?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown, clientId = 'dev-subscriber') {
  return callApi(host.apiUrl, await host.issueToken(clientId), method, path.replace(/^\/v1/, ''), body);
}

const callsOf = (operation: string, keyId: string) =>
  kms.calls.filter((call) => call.operation === operation && call.keyId === keyId);
const postsTo = (receiver: HttpsReceiver) => receiver.requests.filter((request) => request.method === 'POST');

type Jwk = JsonWebKey & { kid: string; alg: string };

/** The receiver's check (README, "Verifying a signed delivery"), with the third-party library and the published keys. */
async function verifies(request: RecordedRequest, sink: string, keys: readonly Jwk[]): Promise<boolean> {
  const verified = await httpbis.verifyMessage(
    {
      async keyLookup({ keyid }): Promise<VerifyingKey | null> {
        const jwk = keys.find((key) => key.kid === keyid);
        return jwk
          ? {
              id: jwk.kid,
              algs: ['ecdsa-p256-sha256'],
              verify: createVerifier(createPublicKey({ key: jwk, format: 'jwk' }), 'ecdsa-p256-sha256'),
            }
          : null;
      },
      // As the README's receiver requires since issue 28 item 11: the Content-Type and every ce- header too.
      requiredFields: [
        '@method',
        '@target-uri',
        'idempotency-key',
        'content-digest',
        'content-type',
        ...Object.keys(request.headers).filter((name) => name.startsWith('ce-')),
      ],
      requiredParams: ['created', 'keyid'],
    },
    { method: request.method, url: `${new URL(sink).origin}${request.path}`, headers: request.headers },
  );
  return verified === true;
}

describe('KMS keys and a container per function on the laptop host (issue 27 §2)', () => {
  let pushId: string;
  let receiver: HttpsReceiver;
  const pushType = `nl.example.kms.${randomUUID().slice(0, 8)}.v1`;
  const windowFrom = new Date(Date.now() - 60_000).toISOString();

  it("CARD-2: the signing keys route publishes the KMS signing key, read with kms:GetPublicKey: the stand-in's own public key, as an ES256 JWK", async () => {
    const response = await fetch(`${host.url}${DIRECTORY}`);
    expect(response.status).toBe(200);
    const { keys } = (await response.json()) as { keys: Jwk[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    const expected = kms.publicKey(SIGNING_KEY).export({ format: 'jwk' });
    expect({ x: keys[0]!.x, y: keys[0]!.y }).toEqual({ x: expected.x, y: expected.y });
    expect(callsOf('GetPublicKey', SIGNING_KEY).length).toBeGreaterThan(0);
  });

  it('CARD-2: a sink credential is sealed with kms:Encrypt under the credentials key, opened by the delivery function with kms:Decrypt; the delivery is signed with kms:Sign and verifies with the published key', async () => {
    receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
    receivers.push(receiver);
    const created = await api('POST', '/subscriptions', {
      sink: receiver.url,
      types: [pushType],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
      signdeliveries: true,
    });
    expect(created.status, created.text).toBe(201);
    pushId = created.body['id'] as string;
    const sealed = callsOf('Encrypt', CREDENTIALS_KEY);
    expect(sealed).toHaveLength(1);
    expect(sealed[0]!.encryptionContext).toBeDefined();

    const body = await publishEvent(apiAs(host.apiUrl, await host.issueToken('dev-publisher')), {
      source: SOURCE,
      type: pushType,
      data: { leerling: 'L-42' },
    });
    const [delivery] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(delivery!.body).toBe(body);
    expect(callsOf('Decrypt', CREDENTIALS_KEY).map((call) => call.encryptionContext)).toContainEqual(
      sealed[0]!.encryptionContext,
    );
    expect(callsOf('Sign', SIGNING_KEY).length).toBeGreaterThan(0);
    const { keys } = (await (await fetch(`${host.url}${DIRECTORY}`)).json()) as { keys: Jwk[] };
    expect(delivery!.headers['signature-input']).toContain(`keyid="${keys[0]!.kid}";alg="ecdsa-p256-sha256"`);
    expect(await verifies(delivery!, receiver.url, keys)).toBe(true);
    expect(
      await verifies(
        { ...delivery!, headers: { ...delivery!.headers, 'idempotency-key': randomUUID() } },
        receiver.url,
        keys,
      ),
    ).toBe(false);
    expect(
      await verifies(
        { ...delivery!, headers: { ...delivery!.headers, 'content-type': 'text/plain' } },
        receiver.url,
        keys,
      ),
    ).toBe(false);
  });

  it('CARD-2: an event too large to travel inline goes by claim check, and the subscriber fetches its data from the payloads function', async () => {
    const before = postsTo(receiver).length;
    await publishEvent(apiAs(host.apiUrl, await host.issueToken('dev-publisher')), {
      source: SOURCE,
      type: pushType,
      data: 'x'.repeat(70_000),
    });
    const [delivery] = (await receiver.waitForRequests(before + 1, { timeoutMs: 15_000 })).slice(before);
    const event = JSON.parse(delivery!.body) as Record<string, unknown>;
    expect(event['dataref']).toMatch(new RegExp(`^${host.apiUrl}/payloads/`));
    const fetched = await fetch(event['dataref'] as string, {
      headers: { authorization: `Bearer ${await host.issueToken('dev-subscriber')}` },
    });
    expect(fetched.status).toBe(200);
    expect(JSON.parse(await fetched.text())).toBe('x'.repeat(70_000));
  });

  it('CARD-2: the delivery administration, replays (their worker reading the archive), the partner directory, the contract register and the API description answer from containers of their own', async () => {
    expect((await api('GET', `/subscriptions/${pushId}/deliveries`)).status).toBe(200);
    expect((await api('GET', `/subscriptions/${pushId}/health`)).status).toBe(200);
    expect((await api('GET', `/subscriptions/${pushId}/dead-letters`)).status).toBe(200);
    expect((await api('POST', `/subscriptions/${pushId}/pause`)).status).toBe(200);
    expect((await api('POST', `/subscriptions/${pushId}/resume`)).status).toBe(200);

    const before = postsTo(receiver).length;
    const started = await api('POST', `/subscriptions/${pushId}/replays`, {
      from: windowFrom,
      to: new Date().toISOString(),
    });
    expect(started.status, started.text).toBe(202);
    // Both events published above, again, marked as replayed.
    const replayed = (await receiver.waitForRequests(before + 2, { timeoutMs: 30_000 })).slice(before);
    expect(replayed.every((request) => request.headers['koerier-replay-id'] === started.body['id'])).toBe(true);
    expect((await api('GET', `/subscriptions/${pushId}/replays`)).status).toBe(200);

    expect((await api('GET', '/clients', undefined, 'dev-publisher')).status).toBe(200);
    expect((await api('GET', '/contracts', undefined, 'dev-publisher')).status).toBe(200);
    expect((await fetch(`${host.apiUrl}/openapi.json`)).status).toBe(200);
    expect((await api('GET', '/subscriptions')).status).toBe(200);
  }, 60_000);

  it('CARD-2: the pull function wraps a new lock-token key with kms:Encrypt and stores it; restarted (a new container) it unwraps that key with kms:Decrypt and settles what it receives', async () => {
    const type = `nl.example.kms.pull.${randomUUID().slice(0, 8)}.v1`;
    const created = await api('POST', '/subscriptions', { delivery: 'pull', types: [type] });
    expect(created.status, created.text).toBe(201);
    const id = created.body['id'] as string;
    const receiveOne = async () => {
      const received = await api('POST', `/subscriptions/${id}/events/receive`, { maxevents: 1, waitseconds: 10 });
      expect(received.status, received.text).toBe(200);
      const [lock] = received.body['locks'] as { locktoken: string }[];
      expect(lock).toBeDefined();
      const acknowledged = await api('POST', `/subscriptions/${id}/events/acknowledge`, {
        locktokens: [lock!.locktoken],
      });
      expect(acknowledged.body).toEqual({ succeeded: [{ locktoken: lock!.locktoken }], failed: [] });
    };

    await publishEvent(apiAs(host.apiUrl, await host.issueToken('dev-publisher')), {
      source: SOURCE,
      type: type,
      data: { leerling: 'L-42' },
    });
    await receiveOne();
    expect(callsOf('Encrypt', LOCK_TOKENS_KEY).map((call) => call.encryptionContext)).toEqual([
      { purpose: 'koerier-lock-tokens' },
    ]);
    expect(callsOf('Decrypt', LOCK_TOKENS_KEY)).toEqual([]);

    await host.stop();
    host = await start();
    await publishEvent(apiAs(host.apiUrl, await host.issueToken('dev-publisher')), {
      source: SOURCE,
      type: type,
      data: { leerling: 'L-42' },
    });
    await receiveOne();
    expect(callsOf('Encrypt', LOCK_TOKENS_KEY)).toHaveLength(1);
    expect(callsOf('Decrypt', LOCK_TOKENS_KEY).map((call) => call.encryptionContext)).toEqual([
      { purpose: 'koerier-lock-tokens' },
    ]);

    expect((await api('DELETE', `/subscriptions/${id}`)).status).toBe(200);
  }, 60_000);
});
