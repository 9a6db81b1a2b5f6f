/**
 * Signed deliveries end to end on the laptop host (issue 12, item 6): a subscription with
 * `signdeliveries` gets every delivery with an RFC 9421 HTTP Message Signature and an RFC 9530
 * Content-Digest, and a receiver verifies it as the README shows — with the third-party library
 * `http-message-signatures` and the keys from Koerier's JWKS route — not with Koerier's own code.
 * Key rotation: the host restarted with a new key in front keeps publishing the previous one, new
 * deliveries carry the new `keyid`, and once the previous key is dropped its signatures stop verifying.
 */
import { createHash, createPublicKey, randomUUID, type JsonWebKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createVerifier, httpbis, type VerifyingKey } from 'http-message-signatures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startKoerierHost, type KoerierHost } from '../../local/host.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, callApi, publishEvents } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
  type RecordedRequest,
} from '../support/https-receiver.js';

const DIRECTORY = '/.well-known/http-message-signatures-directory';
/** What the signature covered before issue 28, item 11: a receiver may still require only these. */
const DELIVERY_COMPONENTS_BEFORE = ['@method', '@target-uri', 'idempotency-key', 'content-digest'];
const authority = createLocalCertificateAuthority();
const receivers: HttpsReceiver[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-signed-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await rm(dir, { recursive: true, force: true });
});

type Jwk = JsonWebKey & { kid: string; alg: string };

async function jwks(baseUrl: string): Promise<{ contentType: string | null; keys: Jwk[] }> {
  const response = await fetch(`${baseUrl}${DIRECTORY}`);
  expect(response.status).toBe(200);
  return { contentType: response.headers.get('content-type'), keys: ((await response.json()) as { keys: Jwk[] }).keys };
}

/**
 * What a receiver does (README, "Verifying a signed delivery"): the Content-Digest must be the
 * body's, and the signature must verify with a key of Koerier's JWKS, covering what Koerier signs.
 * Answers true, or throws / answers false as the library does.
 */
async function verifyDelivery(
  request: RecordedRequest,
  sink: string,
  keys: readonly Jwk[],
  requiredFields: readonly string[] = coveredFields(request.headers),
): Promise<boolean> {
  const digest = `sha-256=:${createHash('sha256').update(request.body).digest('base64')}:`;
  if (request.headers['content-digest'] !== digest) return false;
  const verified = await httpbis.verifyMessage(
    {
      async keyLookup({ keyid }): Promise<VerifyingKey | null> {
        const jwk = keys.find((key) => key.kid === keyid);
        if (!jwk) return null;
        const alg = jwk.crv === 'Ed25519' ? 'ed25519' : 'ecdsa-p256-sha256';
        return { id: jwk.kid, algs: [alg], verify: createVerifier(createPublicKey({ key: jwk, format: 'jwk' }), alg) };
      },
      requiredFields: [...requiredFields],
      requiredParams: ['created', 'keyid'],
      maxAge: 300,
      tolerance: 5,
    },
    { method: request.method, url: `${new URL(sink).origin}${request.path}`, headers: request.headers },
  );
  return verified === true;
}

/** What the README's receiver requires covered: the four, and Content-Type and each `ce-` header the request has (issue 28, item 11). */
function coveredFields(headers: Readonly<Record<string, string>>): string[] {
  const names = Object.keys(headers);
  return [
    '@method',
    '@target-uri',
    'idempotency-key',
    'content-digest',
    ...names.filter((name) => name === 'content-type' || name.startsWith('ce-')),
  ];
}

function event(type: string): string {
  return JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001234567890000:systeem:e2e',
    type,
    data: { hello: 'world' },
  });
}

async function subscribe(
  url: string,
  token: string,
  receiver: HttpsReceiver,
  type: string,
  signed: boolean | undefined,
  contentmode?: 'binary',
): Promise<Record<string, unknown>> {
  const { data, response } = await apiAs(url, token).POST('/subscriptions', {
    body: {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
      ...(signed === undefined ? {} : { signdeliveries: signed }),
      ...(contentmode === undefined ? {} : { contentmode }),
    },
  });
  expect(response.status, JSON.stringify(data)).toBe(201);
  return data as Record<string, unknown>;
}

async function newReceiver(): Promise<HttpsReceiver> {
  const receiver = await startHttpsReceiver({ authority });
  receivers.push(receiver);
  return receiver;
}

describe('signed deliveries on the laptop host (issue 12, item 6)', () => {
  let koerier: TestHost;
  let publisher: string;
  let subscriber: string;

  beforeAll(async () => {
    koerier = await startTestHost({
      [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
    });
    publisher = await koerier.token('dev-publisher', ['events:publish']);
    subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  });
  afterAll(() => koerier?.stop());

  it('issue 12 #6: the JWKS route publishes the signing key without authentication, as a JWK Set with kid, use and alg', async () => {
    const { contentType, keys } = await jwks(koerier.origin);
    expect(contentType).toBe('application/jwk-set+json');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      use: 'sig',
      alg: 'EdDSA',
      kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(keys[0]).not.toHaveProperty('d');
  });

  it('issue 12 #6: a signdeliveries subscription gets a delivery the http-message-signatures library verifies; a changed body, key or target does not verify', async () => {
    const receiver = await newReceiver();
    const type = `nl.example.signed.${randomUUID().slice(0, 8)}.v1`;
    const created = await subscribe(koerier.url, subscriber, receiver, type, true);
    expect(created['signdeliveries']).toBe(true);
    const body = event(type);
    expect((await publishEvents(apiAs(koerier.url, publisher), body)).response.status).toBe(202);
    const [delivery] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(delivery!.body).toBe(body);
    const { keys } = await jwks(koerier.origin);
    expect(delivery!.headers['signature-input']).toMatch(
      new RegExp(
        `^koerier=\\("@method" "@target-uri" "idempotency-key" "content-digest" "content-type"\\);created=\\d+;keyid="${keys[0]!.kid}";alg="ed25519"$`,
      ),
    );
    expect(await verifyDelivery(delivery!, receiver.url, keys)).toBe(true);

    // What a man in the middle, or a confused proxy, might change: each breaks the check.
    expect(await verifyDelivery({ ...delivery!, body: body.replace('world', 'w0rld') }, receiver.url, keys)).toBe(
      false,
    );
    const otherKey = { ...delivery!, headers: { ...delivery!.headers, 'idempotency-key': randomUUID() } };
    expect(await verifyDelivery(otherKey, receiver.url, keys)).toBe(false);
    expect(await verifyDelivery({ ...delivery!, path: '/other' }, receiver.url, keys)).toBe(false);
  });

  it('issue 28 #11: a signed binary-mode delivery covers Content-Type and every ce- header; a changed ce-id, ce-source, ce-type or Content-Type no longer verifies', async () => {
    const receiver = await newReceiver();
    const type = `nl.example.binary.${randomUUID().slice(0, 8)}.v1`;
    await subscribe(koerier.url, subscriber, receiver, type, true, 'binary');
    expect((await publishEvents(apiAs(koerier.url, publisher), event(type))).response.status).toBe(202);
    const [delivery] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(delivery!.headers['ce-type']).toBe(type);
    expect(delivery!.body).toBe('{"hello":"world"}');
    const { keys } = await jwks(koerier.origin);
    // Verified as a receiver that requires only the four components the signature used to cover:
    // the tampered headers still fail, because the signature itself covers them.
    const tampered = {
      'ce-id': randomUUID(),
      'ce-source': 'urn:nld:oin:00000009999999999999:systeem:other',
      'ce-type': 'nl.example.other.v1',
      'content-type': 'text/plain',
    };
    for (const [name, value] of Object.entries(tampered)) {
      const changed = { ...delivery!, headers: { ...delivery!.headers, [name]: value } };
      expect(await verifyDelivery(changed, receiver.url, keys, DELIVERY_COMPONENTS_BEFORE), name).toBe(false);
    }
    expect(delivery!.headers['signature-input']).toMatch(
      /^koerier=\("@method" "@target-uri" "idempotency-key" "content-digest" "content-type" "ce-id" "ce-source" "ce-specversion" "ce-type"\);created=\d+;/,
    );
    expect(await verifyDelivery(delivery!, receiver.url, keys)).toBe(true);
  });

  it("issue 12 #6, issue 28 #11: the README's receiver code, run as written, accepts a signed delivery and refuses a changed one, in binary mode a changed or added ce- header too", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Verifying a signed delivery'));
    const code = /```js\n([\s\S]+?)```/.exec(section)![1]!;
    // The only changes: where Koerier is, and the library found from outside the repository.
    const module = join(dir, `readme-receiver-${randomUUID()}.mjs`);
    await writeFile(
      module,
      code
        .replace("const KOERIER = 'https://koerier.example.org';", `const KOERIER = '${koerier.origin}';`)
        .replace("from 'http-message-signatures'", `from '${import.meta.resolve('http-message-signatures')}'`),
    );
    const { isFromKoerier } = (await import(pathToFileURL(module).href)) as {
      isFromKoerier(request: {
        method: string;
        url: string;
        headers: Record<string, string>;
        body: Buffer;
      }): Promise<boolean>;
    };
    const receiver = await newReceiver();
    const type = `nl.example.readme.${randomUUID().slice(0, 8)}.v1`;
    await subscribe(koerier.url, subscriber, receiver, type, true);
    expect((await publishEvents(apiAs(koerier.url, publisher), event(type))).response.status).toBe(202);
    const [delivery] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    const asReceived = {
      method: delivery!.method,
      url: receiver.url,
      headers: { ...delivery!.headers },
      body: Buffer.from(delivery!.body),
    };
    expect(await isFromKoerier(asReceived)).toBe(true);
    expect(await isFromKoerier({ ...asReceived, body: Buffer.from(delivery!.body.replace('world', 'w0rld')) })).toBe(
      false,
    );
    expect(
      await isFromKoerier({ ...asReceived, headers: { ...asReceived.headers, 'idempotency-key': randomUUID() } }),
    ).toBe(false);

    // Issue 28 #11: in binary mode the event's attributes are headers; none may be changed, or added unsigned.
    const binaryReceiver = await newReceiver();
    const binaryType = `nl.example.readme.binary.${randomUUID().slice(0, 8)}.v1`;
    await subscribe(koerier.url, subscriber, binaryReceiver, binaryType, true, 'binary');
    expect((await publishEvents(apiAs(koerier.url, publisher), event(binaryType))).response.status).toBe(202);
    const [binary] = await binaryReceiver.waitForRequests(1, { timeoutMs: 15_000 });
    const binaryReceived = {
      method: binary!.method,
      url: binaryReceiver.url,
      headers: { ...binary!.headers },
      body: Buffer.from(binary!.body),
    };
    expect(await isFromKoerier(binaryReceived)).toBe(true);
    expect(
      await isFromKoerier({
        ...binaryReceived,
        headers: { ...binaryReceived.headers, 'ce-type': 'nl.example.other.v1' },
      }),
    ).toBe(false);
    expect(
      await isFromKoerier({ ...binaryReceived, headers: { ...binaryReceived.headers, 'ce-subject': 'added' } }),
    ).toBe(false);
  });

  it('issue 12 #6: without signdeliveries a delivery carries no signature; signdeliveries must be a boolean', async () => {
    const receiver = await newReceiver();
    const type = `nl.example.unsigned.${randomUUID().slice(0, 8)}.v1`;
    expect((await subscribe(koerier.url, subscriber, receiver, type, undefined))['signdeliveries']).toBe(false);
    expect((await publishEvents(apiAs(koerier.url, publisher), event(type))).response.status).toBe(202);
    const [delivery] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(delivery!.headers).not.toHaveProperty('signature');
    expect(delivery!.headers).not.toHaveProperty('signature-input');

    // Not a boolean on purpose: callApi, not the typed client, which would not compile it.
    const refused = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
      signdeliveries: 'yes',
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('signdeliveries');
  });
});

describe('signing key rotation on the laptop host (issue 12, item 6)', () => {
  let stateDir: string;
  let configFile: string;
  const hosts: KoerierHost[] = [];

  beforeAll(() => {
    stateDir = join(dir, 'rotation-state');
    configFile = join(dir, 'rotation.local.json');
  });
  afterAll(async () => {
    for (const host of hosts) await host.stop();
  });

  const start = async (signingKeys: string) => {
    const host = await startKoerierHost({
      port: 0,
      stateDir,
      configFile,
      log: () => undefined,
      settings: {
        [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
        [settingEnv.validationAgreedClients]: 'dev-subscriber',
        [settingEnv.signingKeys]: signingKeys,
      },
    });
    hosts.push(host);
    return host;
  };
  const stop = async (host: KoerierHost) => {
    await host.stop();
    hosts.splice(hosts.indexOf(host), 1);
  };

  it('issue 12 #6: before, during and after a rotation: new keyid in front, the previous key published until dropped, its signatures verifiable until then', async () => {
    const receiver = await newReceiver();
    const type = `nl.example.rotation.${randomUUID().slice(0, 8)}.v1`;

    let host = await start('local:k1');
    const [k1] = (await jwks(host.url)).keys;
    await subscribe(host.apiUrl, await host.issueToken('dev-subscriber'), receiver, type, true);
    expect(
      (await publishEvents(apiAs(host.apiUrl, await host.issueToken('dev-publisher')), event(type))).response.status,
    ).toBe(202);
    const [before] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(before!.headers['signature-input']).toContain(`keyid="${k1!.kid}"`);
    await stop(host);

    // Rotation: the new key signs, the previous one stays published.
    host = await start('local:k2,local:k1');
    const during = (await jwks(host.url)).keys;
    expect(during.map((key) => key.kid)).toEqual([expect.not.stringMatching(k1!.kid), k1!.kid]);
    const k2 = during[0]!;
    expect(
      (await publishEvents(apiAs(host.apiUrl, await host.issueToken('dev-publisher')), event(type))).response.status,
    ).toBe(202);
    const after = (await receiver.waitForRequests(2, { timeoutMs: 15_000 }))[1]!;
    expect(after.headers['signature-input']).toContain(`keyid="${k2.kid}"`);
    expect(await verifyDelivery(after, receiver.url, during)).toBe(true);
    expect(await verifyDelivery(before!, receiver.url, during)).toBe(true);
    await stop(host);

    // The previous key retired: what it signed no longer verifies; the current key's does.
    host = await start('local:k2');
    const retired = (await jwks(host.url)).keys;
    expect(retired.map((key) => key.kid)).toEqual([k2.kid]);
    expect(await verifyDelivery(after, receiver.url, retired)).toBe(true);
    await expect(verifyDelivery(before!, receiver.url, retired)).resolves.toBe(false);
    await stop(host);
  });
});
