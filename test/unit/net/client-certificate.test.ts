/**
 * mTLS towards targets (issue 12, item 5), below the laptop host: the safe client presents the
 * certificate only where a server asks, keeps its address guard, loads the certificate once and
 * again after a failed load; the certificate source reads a PEM file or a Secrets Manager secret
 * through the Parameters and Secrets extension's HTTP interface (a stand-in server here: no
 * emulator of the extension exists), and never puts the key in an error.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCertificateSource, parseClientCertificate } from '../../../functions/aws/client-certificate.js';
import {
  createSafeHttpClient,
  OutboundRequestError,
  type ClientCertificate,
  type SafeHttpClient,
} from '../../../functions/net/safe-http-client.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../../support/https-receiver.js';

const authority = createLocalCertificateAuthority();
const issued = authority.issueClient('koerier.test');
const certificate: ClientCertificate = { certificate: issued.cert, privateKey: issued.key };
let mtls: HttpsReceiver;
let plain: HttpsReceiver;
const clients: SafeHttpClient[] = [];

beforeAll(async () => {
  [mtls, plain] = await Promise.all([
    startHttpsReceiver({ authority, requireClientCertificate: authority }),
    startHttpsReceiver({ authority }),
  ]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([mtls.close(), plain.close()]);
});

function client(
  load?: () => Promise<ClientCertificate>,
  extra: Parameters<typeof createSafeHttpClient>[0] = {},
): SafeHttpClient {
  const created = createSafeHttpClient({
    extraCaCertificates: [authority.certificatePem],
    allowLoopback: true,
    ...(load ? { clientCertificate: load } : {}),
    ...extra,
  });
  clients.push(created);
  return created;
}

async function failure(promise: Promise<unknown>): Promise<OutboundRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundRequestError);
  return error as OutboundRequestError;
}

describe('the safe client with a client certificate (issue 12, item 5)', () => {
  it('issue 12 #5: presents the certificate to a server that demands one, loading it once for every request after', async () => {
    let loads = 0;
    const withCertificate = client(async () => (loads++, certificate), { connectionsPerOrigin: 1 });
    for (let i = 0; i < 3; i++)
      expect((await withCertificate.request({ method: 'POST', url: mtls.url, body: 'x' })).status).toBe(204);
    expect(mtls.requests.at(-1)?.clientCertificate).toBe('koerier.test');
    expect(loads).toBe(1);
  });

  it('issue 12 #5: without it, the same server refuses before any request; a server that asks for none is reached either way', async () => {
    const before = mtls.requests.length;
    await failure(client().request({ method: 'POST', url: mtls.url, body: 'x' }));
    expect(mtls.requests.length).toBe(before);
    expect((await client(async () => certificate).request({ method: 'POST', url: plain.url, body: 'x' })).status).toBe(
      204,
    );
  });

  it('issue 12 #5: the address guard stays on: a name resolving to a private address is refused, certificate or not', async () => {
    const lookup = ((
      _host: string,
      _options: unknown,
      callback: (e: null, a: { address: string; family: number }[]) => void,
    ) => callback(null, [{ address: '10.1.2.3', family: 4 }])) as unknown as LookupFunction;
    const error = await failure(
      client(async () => certificate, { lookup, allowLoopback: false }).request({
        method: 'POST',
        url: 'https://target.example/',
      }),
    );
    expect(error.kind).toBe('refused-address');
  });

  it('issue 12 #5: a certificate that cannot be loaded fails the request as tls, without its cause in the message, and is loaded again next time', async () => {
    let loads = 0;
    const flaky = client(async () => {
      loads++;
      if (loads === 1) throw new Error('secret store down: -----BEGIN PRIVATE KEY----- leaked?');
      return certificate;
    });
    const error = await failure(flaky.request({ method: 'POST', url: mtls.url, body: 'x' }));
    expect(error.kind).toBe('tls');
    expect(error.message).not.toContain('PRIVATE KEY');
    expect((await flaky.request({ method: 'POST', url: mtls.url, body: 'x' })).status).toBe(204);
    expect(loads).toBe(2);
  });
});

describe('where the client certificate comes from (issue 12, item 5)', () => {
  const pem = `${issued.cert}\n${authority.certificatePem}\n${issued.key}`;

  it('issue 12 #5: one PEM text: the chain in order and the one private key', () => {
    const parsed = parseClientCertificate(pem);
    expect(parsed.certificate.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(parsed.certificate.startsWith(issued.cert.trim())).toBe(true);
    expect(parsed.privateKey).toBe(issued.key.trim());
  });

  it('issue 12 #5: no certificate, no key, two keys or an encrypted key are refused, naming what is wrong and never a value', () => {
    expect(() => parseClientCertificate(issued.key)).toThrow('holds no CERTIFICATE');
    expect(() => parseClientCertificate(issued.cert)).toThrow('exactly one private key, not 0');
    expect(() => parseClientCertificate(`${pem}\n${issued.key}`)).toThrow('exactly one private key, not 2');
    const encrypted = `${issued.cert}\n-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----`;
    expect(() => parseClientCertificate(encrypted)).toThrow('must not be encrypted');
    for (const bad of [issued.key, `${pem}\n${issued.key}`]) {
      try {
        parseClientCertificate(bad);
      } catch (error) {
        expect((error as Error).message).not.toContain('MII');
      }
    }
  });

  describe('a Secrets Manager secret through the Parameters and Secrets extension', () => {
    let extension: Server;
    let extensionUrl: string;
    const seen: { url: string; token: string | undefined }[] = [];
    const secretArn = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:koerier/client-certificate-AbCdEf';

    beforeAll(async () => {
      // What the extension documents: GET /secretsmanager/get?secretId=…, the session token in a header, the GetSecretValue answer.
      extension = createServer((request, response) => {
        seen.push({
          url: request.url ?? '',
          token: request.headers['x-aws-parameters-secrets-token'] as string | undefined,
        });
        const id = new URL(request.url ?? '', 'http://localhost').searchParams.get('secretId');
        if (request.headers['x-aws-parameters-secrets-token'] !== 'session-token')
          return void response.writeHead(401).end();
        if (id !== secretArn) return void response.writeHead(400).end(`secret ${id} not found`);
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ARN: secretArn, SecretString: pem }));
      });
      await new Promise<void>((resolve) => extension.listen(0, '127.0.0.1', resolve));
      extensionUrl = `http://127.0.0.1:${(extension.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => extension.close(() => resolve())));

    it('issue 12 #5: asks for the secret by ARN with the session token and reads the PEM from SecretString', async () => {
      const loaded = await clientCertificateSource(secretArn, { extensionUrl, sessionToken: () => 'session-token' })();
      expect(loaded).toEqual(parseClientCertificate(pem));
      expect(seen.at(-1)).toEqual({
        url: `/secretsmanager/get?secretId=${encodeURIComponent(secretArn)}`,
        token: 'session-token',
      });
    });

    it('issue 12 #5: a refusal becomes an error with the status only; without a session token nothing is asked', async () => {
      await expect(
        clientCertificateSource(`${secretArn}x`, { extensionUrl, sessionToken: () => 'session-token' })(),
      ).rejects.toThrow(/^the Parameters and Secrets extension answered 400 for the client certificate secret$/);
      const asked = seen.length;
      await expect(
        clientCertificateSource(secretArn, { extensionUrl, sessionToken: () => undefined })(),
      ).rejects.toThrow(/no session token/);
      expect(seen.length).toBe(asked);
    });
  });
});
