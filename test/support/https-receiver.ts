/**
 * Real HTTPS webhook receivers for tests, with certificates from a local certificate authority
 * made for the test run. A receiver follows a script (fail N times then succeed, 429 with
 * Retry-After, 410, 415, hang, reset, slow) and records every request it gets, headers and body.
 *
 * Every receiver is also the subscriber's OAuth2 authorization server (WH-3, EDU-4: Koerier
 * presents a token on every delivery, by default only one it got with client credentials): POST
 * `/oauth/token` with the receiver's client id and secret (client_secret_basic) answers a bearer
 * token. Token requests are kept apart (`tokenRequests`), so `requests` holds only the webhook's.
 *
 * Keys come from node:crypto (fast, native); node-forge only writes the X.509 certificates.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import forge from 'node-forge';
import { noteTestSecret } from './log-scan.js';

export interface LocalCertificateAuthority {
  /** PEM of the CA certificate: what a client must trust to reach the receivers. */
  readonly certificatePem: string;
  /** A server certificate for these DNS names and IP addresses, signed by this CA. */
  issue(names: readonly string[]): { readonly key: string; readonly cert: string };
  /** A client certificate (extended key usage clientAuth) for `commonName`, signed by this CA: what Koerier presents for mTLS. */
  issueClient(commonName: string): { readonly key: string; readonly cert: string };
}

export function createLocalCertificateAuthority(commonName = 'Koerier test CA'): LocalCertificateAuthority {
  const caKeys = rsaKeyPair();
  const ca = newCertificate(caKeys.publicKey, [{ name: 'commonName', value: commonName }]);
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  let serial = 1;

  return {
    certificatePem: forge.pki.certificateToPem(ca),
    issue(names) {
      const keys = rsaKeyPair();
      const cert = newCertificate(keys.publicKey, [{ name: 'commonName', value: names[0] ?? 'localhost' }], ++serial);
      cert.setIssuer(ca.subject.attributes);
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: names.map((n) => (/^[\d.]+$|:/.test(n) ? { type: 7, ip: n } : { type: 2, value: n })),
        },
      ]);
      cert.sign(caKeys.privateKey, forge.md.sha256.create());
      return { key: forge.pki.privateKeyToPem(keys.privateKey), cert: forge.pki.certificateToPem(cert) };
    },
    issueClient(commonName) {
      const keys = rsaKeyPair();
      const cert = newCertificate(keys.publicKey, [{ name: 'commonName', value: commonName }], ++serial);
      cert.setIssuer(ca.subject.attributes);
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', clientAuth: true },
      ]);
      cert.sign(caKeys.privateKey, forge.md.sha256.create());
      return { key: forge.pki.privateKeyToPem(keys.privateKey), cert: forge.pki.certificateToPem(cert) };
    },
  };
}

function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey) };
}

function newCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  subject: forge.pki.CertificateField[],
  serial = 1,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial.toString(16).padStart(2, '0');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject(subject);
  return cert;
}

/** What the receiver does with one request. */
export type ReceiverBehaviour =
  | { readonly respond: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  /** Accept the request and never answer (until the receiver closes). */
  | { readonly hang: true }
  /** Reset the TCP connection without answering. */
  | { readonly reset: true }
  /** Answer `respond` after `delayMs`. */
  | { readonly respond: number; readonly delayMs: number; readonly headers?: Readonly<Record<string, string>> };

/** Decides the behaviour for the n-th request (1-based) the receiver gets. */
export type ReceiverScript = (n: number, request: RecordedRequest) => ReceiverBehaviour;

export const scripts = {
  always:
    (behaviour: ReceiverBehaviour): ReceiverScript =>
    () =>
      behaviour,
  /** `times` answers of `status`, then 204 for ever. */
  failThenSucceed:
    (times: number, status = 500): ReceiverScript =>
    (n) =>
      n <= times ? { respond: status } : { respond: 204 },
  /** The given behaviours in order, then `after` for ever. */
  sequence:
    (behaviours: readonly ReceiverBehaviour[], after: ReceiverBehaviour = { respond: 204 }): ReceiverScript =>
    (n) =>
      behaviours[n - 1] ?? after,
};

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Epoch ms when the request was complete. */
  readonly receivedAt: number;
  /** With `requireClientCertificate`: the common name of the verified client certificate the request came with. */
  readonly clientCertificate?: string;
}

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>/hook`. */
  readonly url: string;
  readonly port: number;
  /** `https://127.0.0.1:<port>/oauth/token`. */
  readonly tokenUrl: string;
  /** Client credentials for the token endpoint, as a subscription's `sinkcredential` names them. */
  readonly sinkCredential: {
    readonly credentialtype: 'CLIENTCREDENTIALS';
    readonly tokenurl: string;
    readonly clientid: string;
    readonly clientsecret: string;
  };
  /** The same, as Koerier keeps it once parsed. */
  readonly clientCredentials: {
    readonly kind: 'oauth2-client-credentials';
    readonly tokenUrl: string;
    readonly clientId: string;
    readonly clientSecret: string;
  };
  /** The access token the token endpoint hands out: what `Authorization: Bearer` must carry. */
  readonly accessToken: string;
  /** Token requests so far (not in `requests`). */
  readonly tokenRequests: readonly RecordedRequest[];
  /** Every request so far, in arrival order (including those it hung on or reset). */
  readonly requests: readonly RecordedRequest[];
  /** TCP connections accepted so far: 0 proves a client never even connected. */
  readonly connectionCount: number;
  /** TLS handshakes refused so far (with `requireClientCertificate`: clients without an acceptable certificate). */
  readonly tlsFailures: number;
  /** Replaces the script; the request count keeps running. */
  setScript(script: ReceiverScript): void;
  /** Resolves once `count` requests matching `filter` (default: POSTs) have arrived. */
  waitForRequests(
    count: number,
    options?: { timeoutMs?: number; filter?: (r: RecordedRequest) => boolean },
  ): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

/**
 * Receivers of one authority share one server certificate per set of names, as servers behind one
 * name do: issuing one costs an RSA key and a signature in JavaScript (0.1–0.2 s of CPU), and a
 * test run starts a hundred receivers or more.
 */
const issued = new WeakMap<LocalCertificateAuthority, Map<string, { readonly key: string; readonly cert: string }>>();
function serverCertificate(
  authority: LocalCertificateAuthority,
  names: readonly string[],
): { readonly key: string; readonly cert: string } {
  const byNames = issued.get(authority) ?? new Map<string, { readonly key: string; readonly cert: string }>();
  issued.set(authority, byNames);
  const id = names.join(' ');
  const certificate = byNames.get(id) ?? authority.issue(names);
  byNames.set(id, certificate);
  return certificate;
}

export async function startHttpsReceiver(options: {
  readonly authority: LocalCertificateAuthority;
  readonly script?: ReceiverScript;
  /** Names in the certificate; default 127.0.0.1, ::1 and localhost. */
  readonly names?: readonly string[];
  readonly host?: string;
  /**
   * mTLS: the TLS handshake fails unless the client presents a certificate this CA signed, so a
   * client without one never gets a request through (`requests` stays empty).
   */
  readonly requireClientCertificate?: LocalCertificateAuthority;
}): Promise<HttpsReceiver> {
  const { key, cert } = serverCertificate(options.authority, options.names ?? ['127.0.0.1', '::1', 'localhost']);
  const requests: RecordedRequest[] = [];
  const tokenRequests: RecordedRequest[] = [];
  const clientId = 'koerier';
  const clientSecret = randomBytes(18).toString('base64url');
  const accessToken = randomBytes(24).toString('base64url');
  noteTestSecret(clientSecret, accessToken);
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  // The TLS socket of a request cannot send a TCP reset; its underlying connection can.
  const tcpSockets = new Map<number, Socket>();
  let connectionCount = 0;
  let script = options.script ?? scripts.always({ respond: 204 });

  const mtls = options.requireClientCertificate
    ? { requestCert: true, rejectUnauthorized: true, ca: [options.requireClientCertificate.certificatePem] }
    : {};
  const server: Server = createServer({ key, cert, ...mtls }, (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: Object.fromEntries(
          Object.entries(request.headers).map(([n, v]) => [n, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
        ),
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        ...(options.requireClientCertificate
          ? { clientCertificate: String((request.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '') }
          : {}),
      };
      if (recorded.path === '/oauth/token') {
        tokenRequests.push(recorded);
        return answerToken(recorded, response, clientId, clientSecret, accessToken);
      }
      requests.push(recorded);
      const behaviour = script(requests.length, recorded);
      for (const wake of waiters) wake();
      act(behaviour, response, () => tcpSockets.get(request.socket.remotePort ?? 0));
    });
  });
  let tlsFailures = 0;
  server.on('tlsClientError', () => tlsFailures++);
  server.on('connection', (socket: Socket) => {
    connectionCount++;
    sockets.add(socket);
    const remotePort = socket.remotePort ?? 0;
    tcpSockets.set(remotePort, socket);
    socket.on('close', () => {
      sockets.delete(socket);
      if (tcpSockets.get(remotePort) === socket) tcpSockets.delete(remotePort);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const host = options.host?.includes(':') ? `[${options.host}]` : (options.host ?? '127.0.0.1');

  const tokenUrl = `https://${host}:${port}/oauth/token`;
  return {
    url: `https://${host}:${port}/hook`,
    port,
    tokenUrl,
    sinkCredential: {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: tokenUrl,
      clientid: clientId,
      clientsecret: clientSecret,
    },
    clientCredentials: { kind: 'oauth2-client-credentials', tokenUrl, clientId, clientSecret },
    accessToken,
    tokenRequests,
    requests,
    get connectionCount() {
      return connectionCount;
    },
    get tlsFailures() {
      return tlsFailures;
    },
    setScript(next) {
      script = next;
    },
    waitForRequests(count, { timeoutMs = 10_000, filter = (r: RecordedRequest) => r.method === 'POST' } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const matching = requests.filter(filter);
          if (matching.length < count) return;
          cleanup();
          resolve(matching);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `receiver got ${requests.filter(filter).length} of ${count} expected requests within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** RFC 6749 §4.4 with client_secret_basic; anything else is a 401 `invalid_client`. */
function answerToken(
  request: RecordedRequest,
  response: ServerResponse,
  clientId: string,
  clientSecret: string,
  accessToken: string,
): void {
  const expected = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
  const form = new URLSearchParams(request.body);
  if (
    request.method !== 'POST' ||
    request.headers['authorization'] !== expected ||
    form.get('grant_type') !== 'client_credentials'
  ) {
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'invalid_client' }));
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600 }));
}

function act(behaviour: ReceiverBehaviour, response: ServerResponse, tcpSocket: () => Socket | undefined): void {
  if ('hang' in behaviour) return;
  if ('reset' in behaviour) {
    const socket = tcpSocket();
    if (socket) socket.resetAndDestroy();
    else response.socket?.destroy();
    return;
  }
  const answer = () => {
    response.writeHead(behaviour.respond, { ...behaviour.headers });
    response.end('body' in behaviour ? behaviour.body : undefined);
  };
  if ('delayMs' in behaviour) setTimeout(answer, behaviour.delayMs);
  else answer();
}
