/**
 * mTLS towards targets end to end on the laptop host (issue 12, item 5): a receiver that demands
 * a client certificate from a local certificate authority made for this test. A host without
 * KOERIER_CLIENT_CERTIFICATE cannot get a delivery through (the TLS handshake is refused, the
 * receiver never sees a request); a host configured with the certificate's PEM file delivers, and
 * the receiver sees the certificate. The validation handshake presents it too. The target's OAuth2
 * token endpoint is a separate server without mTLS, as an identity provider usually is.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const authority = createLocalCertificateAuthority('Koerier test PKI');
/** Another authority: its certificates are not the ones the receiver trusts. */
const stranger = createLocalCertificateAuthority('Somebody else');
const receivers: HttpsReceiver[] = [];
let dir: string;
let tokens: HttpsReceiver;
let withCertificate: TestHost;
let withoutCertificate: TestHost;
let withWrongCertificate: TestHost;

const commonSettings = () => ({
  [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
  [settingEnv.validationAgreedClients]: 'dev-subscriber',
  [settingEnv.deliveryRetryInitialSeconds]: '1',
  [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
  [settingEnv.deliveryConnectTimeoutMs]: '1000',
  [settingEnv.deliveryResponseTimeoutMs]: '2000',
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-mtls-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  const client = authority.issueClient('koerier.local');
  await writeFile(join(dir, 'client.pem'), `${client.cert}\n${client.key}`, { mode: 0o600 });
  const wrong = stranger.issueClient('koerier.local');
  await writeFile(join(dir, 'wrong.pem'), `${wrong.cert}\n${wrong.key}`, { mode: 0o600 });
  tokens = await startHttpsReceiver({ authority });
  receivers.push(tokens);
  [withCertificate, withoutCertificate, withWrongCertificate] = await Promise.all([
    startTestHost(
      { ...commonSettings(), [settingEnv.clientCertificate]: `file:${join(dir, 'client.pem')}` },
      { exportEnvironment: false },
    ),
    startTestHost(commonSettings(), { exportEnvironment: false }),
    startTestHost(
      { ...commonSettings(), [settingEnv.clientCertificate]: `file:${join(dir, 'wrong.pem')}` },
      { exportEnvironment: false },
    ),
  ]);
});

afterAll(async () => {
  await Promise.all([withCertificate?.stop(), withoutCertificate?.stop(), withWrongCertificate?.stop()]);
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await rm(dir, { recursive: true, force: true });
});

/** A call as dev-publisher for /events, as dev-subscriber otherwise, answered whatever its status. */
async function call(koerier: TestHost, method: string, path: string, body?: unknown) {
  const token = await koerier.token(path === '/events' ? 'dev-publisher' : 'dev-subscriber');
  const headers: Record<string, string> =
    path === '/events' && body !== undefined ? { 'content-type': 'application/cloudevents+json' } : {};
  return callApi(koerier.url, token, method, path, body, headers);
}

/** An mTLS receiver and an agreed subscription of `koerier` to it, then one event published. */
async function deliverThroughMtls(koerier: TestHost): Promise<{ receiver: HttpsReceiver; id: string }> {
  const receiver = await startHttpsReceiver({ authority, requireClientCertificate: authority });
  receivers.push(receiver);
  const type = `nl.example.mtls.${randomUUID().slice(0, 8)}.v1`;
  const created = await call(koerier, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: tokens.sinkCredential,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const published = await call(koerier, 'POST', '/events', {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001234567890000:systeem:e2e',
    type,
    data: { hello: 'mtls' },
  });
  expect(published.status).toBe(202);
  return { receiver, id: created.body['id'] as string };
}

async function failedAttempts(koerier: TestHost, id: string, count = 1): Promise<{ outcome: string }[]> {
  return eventually(`${count} failed attempts in the history`, async () => {
    const attempts = (await call(koerier, 'GET', `/subscriptions/${id}/deliveries`)).body['attempts'] as {
      outcome: string;
    }[];
    return attempts.length >= count ? attempts : undefined;
  });
}

describe.concurrent('mTLS towards targets on the laptop host (issue 12, item 5)', () => {
  it('issue 12 #5: without a client certificate the receiver refuses the TLS handshake: no request arrives, the attempt fails and is retried', async () => {
    const { receiver, id } = await deliverThroughMtls(withoutCertificate);
    const attempts = await failedAttempts(withoutCertificate, id, 2);
    expect(attempts.map((attempt) => attempt.outcome)).not.toContain('delivered');
    expect(receiver.tlsFailures).toBeGreaterThan(0);
    expect(receiver.requests).toHaveLength(0);
  });

  it('issue 12 #5: with KOERIER_CLIENT_CERTIFICATE the delivery is accepted and the receiver sees the certificate', async () => {
    const { receiver } = await deliverThroughMtls(withCertificate);
    const [delivery] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(delivery!.clientCertificate).toBe('koerier.local');
    expect(JSON.parse(delivery!.body)).toMatchObject({ data: { hello: 'mtls' } });
    expect(delivery!.headers['authorization']).toBe(`Bearer ${tokens.accessToken}`);
    expect(receiver.tlsFailures).toBe(0);
  });

  it('issue 12 #5: a certificate from an authority the receiver does not trust is refused like none', async () => {
    const { receiver, id } = await deliverThroughMtls(withWrongCertificate);
    await failedAttempts(withWrongCertificate, id);
    await staysQuiet('a request through', () => receiver.requests.length > 0 && receiver.requests, 1_500);
    expect(receiver.tlsFailures).toBeGreaterThan(0);
  });

  it('issue 12 #5: the validation handshake presents the certificate too, so an mTLS target can consent', async () => {
    const receiver = await startHttpsReceiver({
      authority,
      requireClientCertificate: authority,
      script: scripts.always({ respond: 200, headers: { 'webhook-allowed-origin': '*' } }),
    });
    receivers.push(receiver);
    const created = await call(withCertificate, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [`nl.example.mtls.${randomUUID().slice(0, 8)}.v1`],
      sinkcredential: tokens.sinkCredential,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body['status']).toBe('active');
    const [options] = await receiver.waitForRequests(1, { filter: (r) => r.method === 'OPTIONS' });
    expect(options!.clientCertificate).toBe('koerier.local');
  });
});
