import { createHash, createHmac } from 'node:crypto';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { AwsHttpRequest } from './aws-http-transport.js';

/**
 * SigV4 header signing, as @smithy/signature-v4 signs, for the requests of the JSON-protocol clients
 * (POST to `/`, no query): node:crypto's hashes called synchronously and the day's signing key
 * derived once per day and credentials, where the SDK's signer took about 45 µs a request through
 * its promise-returning hash and a keyed hash of the credentials for its key cache (issue 15).
 * Any other request is left to the SDK's signer (`undefined`); ./aws-json-protocol.ts asks this one
 * first. The signing tests (test/unit/aws/*-requests-signing.test.ts) compare its requests with the
 * SDK's, byte for byte.
 */
export class JsonRequestSigner {
  private readonly credentials: () => Promise<AwsCredentialIdentity>;
  private signingKey: { readonly day: string; readonly accessKeyId: string; readonly secretAccessKey: string; readonly key: Buffer } | undefined;

  constructor(
    credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider,
    private readonly region: string,
    private readonly service: string,
  ) {
    this.credentials = typeof credentials === 'function' ? credentials : () => Promise.resolve(credentials);
  }

  async sign(request: AwsHttpRequest): Promise<Record<string, string> | undefined> {
    if (request.path !== '/' || Object.keys(request.query).length > 0) return undefined;
    const credentials = await this.credentials();
    // Left to the SDK's signer, which refuses them as it always has.
    if (typeof credentials.accessKeyId !== 'string' || typeof credentials.secretAccessKey !== 'string') return undefined;
    const longDate = new Date()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z')
      .replace(/[-:]/g, '');
    const day = longDate.slice(0, 8);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      const lower = name.toLowerCase();
      // A payload hash given in a header is the SDK's signer's to honour.
      if (lower === 'x-amz-content-sha256') return undefined;
      // What the signer sets itself, as the SDK's drops it before signing.
      if (!GENERATED_HEADERS.has(lower)) headers[name] = value;
    }
    headers['x-amz-date'] = longDate;
    if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
    const payloadHash = createHash('sha256')
      .update(request.body ?? '')
      .digest('hex');
    // As the SDK's signer does by default: the payload's hash also goes out as a header.
    headers['x-amz-content-sha256'] = payloadHash;
    const canonical: [string, string][] = [];
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (!UNSIGNABLE_HEADERS.has(lower) && !/^(proxy|sec)-/.test(lower))
        canonical.push([
          lower,
          value
            .replace(/[\r\n]/g, ' ')
            .replace(/[ \t]+/g, ' ')
            .replace(/^ | $/g, ''),
        ]);
    }
    canonical.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const signedHeaders = canonical.map(([name]) => name).join(';');
    const canonicalRequest = `${request.method}\n/\n\n${canonical.map(([name, value]) => `${name}:${value}\n`).join('')}\n${signedHeaders}\n${payloadHash}`;
    const scope = `${day}/${this.region}/${this.service}/aws4_request`;
    const stringToSign = `AWS4-HMAC-SHA256\n${longDate}\n${scope}\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
    const signature = createHmac('sha256', this.keyFor(day, credentials)).update(stringToSign).digest('hex');
    headers['authorization'] = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
    return headers;
  }

  private keyFor(day: string, { accessKeyId, secretAccessKey }: AwsCredentialIdentity): Buffer {
    const cached = this.signingKey;
    if (cached && cached.day === day && cached.accessKeyId === accessKeyId && cached.secretAccessKey === secretAccessKey) return cached.key;
    let key: Buffer = Buffer.from(`AWS4${secretAccessKey}`, 'utf8');
    for (const part of [day, this.region, this.service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    this.signingKey = { day, accessKeyId, secretAccessKey, key };
    return key;
  }
}

/** What @smithy/signature-v4 removes before signing, and what it never signs. */
const GENERATED_HEADERS = new Set(['authorization', 'x-amz-date', 'date']);
const UNSIGNABLE_HEADERS = new Set([
  'authorization',
  'cache-control',
  'connection',
  'expect',
  'from',
  'keep-alive',
  'max-forwards',
  'pragma',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);
