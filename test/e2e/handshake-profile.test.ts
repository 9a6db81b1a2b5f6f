/**
 * Issue 36 item 5 on the laptop host: the validation handshake follows the deployment's profile.
 * The receiver is a real HTTP server that, like a receiver built to the Edukoppeling profile
 * (rule 3f drops abuse protection), does not implement OPTIONS: it answers 405. With the value an
 * Edukoppeling deployment gets from its preset (derived here as the CDK stack derives it), its
 * subscription is active at once and the profile's full example event reaches it unchanged
 * (EDU-3); with NL GOV's default the same subscription is refused, as before.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { parseStackConfig, settingEnvironment } from '../../lib/stack-config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { NL_GOV_EXAMPLE_EVENT } from '../support/nl-gov-example-event.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const TYPE = 'nl.overheid.zaken.zaakstatus-gewijzigd';
const SUBSCRIBER = 'gemeente-x';

/** What `koerier:identityProvider` makes of the handshake setting in the functions' environment. */
function handshakeSettingOf(identityProvider: string | undefined): string {
  const config = parseStackConfig({
    'koerier:issuer': 'https://login.example.org/realms/koerier',
    'koerier:audience': 'koerier',
    'koerier:jwksUrl': 'https://login.example.org/jwks',
    'koerier:allowedOrigins': '*',
    'koerier:webhookOrigin': 'koerier.example.org',
    'koerier:publishers': { 'dev-publisher': [''] },
    ...(identityProvider === undefined ? {} : { 'koerier:identityProvider': identityProvider }),
  });
  return settingEnvironment(config, 'https://api.example.org')[settingEnv.validationHandshake]!;
}

interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A receiver without the handshake: 405 to OPTIONS, its own token endpoint, 204 to deliveries. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'POST' && req.url === '/oauth/token') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'receiver-token', token_type: 'Bearer', expires_in: 3600 }));
        return;
      }
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      if (req.method === 'OPTIONS') res.writeHead(405, { allow: 'POST' }).end();
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A host whose functions run with `settings`, the subscriber entitled to the example's type, and the receiver. */
function deployment(settings: Record<string, string>) {
  const state = {} as { koerier: TestHost; receiver: Awaited<ReturnType<typeof startReceiver>> };
  beforeAll(async () => {
    state.receiver = await startReceiver();
    state.koerier = await startTestHost({
      ...settings,
      [settingEnv.entitlements]: JSON.stringify({ [SUBSCRIBER]: [{ typePrefix: 'nl.overheid.zaken.' }] }),
    });
  });
  afterAll(async () => {
    await state.koerier?.stop();
    await state.receiver?.close();
  });
  const subscribe = async () => {
    const token = await state.koerier.host.issueToken(SUBSCRIBER, ['subscriptions:manage']);
    return callApi(state.koerier.url, token, 'POST', '/subscriptions', {
      sink: `${state.receiver.url}/hook`,
      types: [TYPE],
      sinkcredential: {
        credentialtype: 'CLIENTCREDENTIALS',
        tokenurl: `${state.receiver.url}/oauth/token`,
        clientid: 'koerier',
        clientsecret: 'receiver-secret',
      },
    });
  };
  // The example's text as it is, so what is delivered can be compared with it byte for byte.
  const publishExample = async () =>
    tryPublish(state.koerier.url, await state.koerier.token('dev-publisher', ['events:publish']), NL_GOV_EXAMPLE_EVENT);
  const deliveries = () => state.receiver.received.filter((r) => r.method === 'POST' && r.path === '/hook');
  const handshakes = () => state.receiver.received.filter((r) => r.method === 'OPTIONS');
  return { subscribe, publishExample, deliveries, handshakes };
}

describe('an Edukoppeling deployment (koerier:identityProvider=edukoppeling)', () => {
  const edukoppeling = deployment({ [settingEnv.validationHandshake]: handshakeSettingOf('edukoppeling') });

  it('EDU-3, WH-5: a subscription to a receiver answering 405 to OPTIONS is active at once; the full example event is accepted without findings and delivered unchanged', async () => {
    expect(handshakeSettingOf('edukoppeling')).toBe('agreed-for-directory-partners');
    const created = await edukoppeling.subscribe();
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', validation: 'agreed' });
    expect(edukoppeling.handshakes()).toEqual([]);

    const published = await edukoppeling.publishExample();
    expect(published.status).toBe(202);
    expect(published.body).toEqual({
      acceptedCount: 1,
      accepted: [
        {
          source: 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
          id: 'f3dce042-cd6e-4977-844d-05be8dce7cea',
        },
      ],
    });

    const [delivery] = await eventually('the example event at the receiver', () =>
      edukoppeling.deliveries().length > 0 ? edukoppeling.deliveries() : undefined,
    );
    expect(delivery!.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
    // Byte for byte: dataref, sequence, sequencetype and the null extension as the publisher wrote them.
    expect(delivery!.body).toBe(NL_GOV_EXAMPLE_EVENT);
    expect(delivery!.headers['authorization']).toBe('Bearer receiver-token');
    expect(edukoppeling.handshakes()).toEqual([]);
  });
});

describe('an NL GOV deployment (no profile preset)', () => {
  const nlGov = deployment({ [settingEnv.validationHandshake]: handshakeSettingOf(undefined) });

  it('WH-5, EDU-3: the same subscription gets the handshake, is rejected on 405, and the receiver gets no event', async () => {
    expect(handshakeSettingOf(undefined)).toBe('required');
    const created = await nlGov.subscribe();
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'rejected',
      validation: 'handshake',
      statusreason: expect.stringContaining('does not support the validation handshake (HTTP 405)'),
    });
    expect(nlGov.handshakes()).toHaveLength(1);
    expect((await nlGov.publishExample()).status).toBe(202);
    await staysQuiet('delivery to the rejected subscription', () => nlGov.deliveries().length > 0, 3000);
  });
});
