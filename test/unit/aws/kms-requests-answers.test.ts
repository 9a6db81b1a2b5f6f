/**
 * How the lean KMS client (functions/aws/kms-requests.ts) and the adapters on it take KMS's
 * answers, over a real local HTTP server that answers as KMS documents its JSON 1.1 API (blobs in
 * base64, a DER SubjectPublicKeyInfo, a DER ECDSA signature; errors as `__type` and `message`):
 * the adapters read what the SDK client reads from the same server, errors name KMS's code and
 * status and nothing secret, and the SDK's standard retries (issue 15, item 4).
 */
import { createCipheriv, createDecipheriv, createHash, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DecryptCommand, EncryptCommand, GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { credentialCipherFor } from '../../../functions/aws/credential-cipher.js';
import { KmsRequests } from '../../../functions/aws/kms-requests.js';
import { ecdsaDerToRaw, publicJwk, signingKeysFor } from '../../../functions/aws/signing-keys.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

const CREDENTIALS = { accessKeyId: 'AKIDKMSANSWERS', secretAccessKey: 'kms-answer-test-secret-key' };
const SYMMETRIC_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555';
const SIGNING_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/66666666-7777-8888-9999-000000000000';

type Answer = (request: IncomingMessage, response: ServerResponse, body: Record<string, string>) => void;

let stub: AwsServiceStub;
let endpoint: string;
/** Answers to give first, in order; after them the server answers as KMS would. */
let faults: Answer[];
let seen: { target: string; contentType: string; authorization: string; body: Record<string, unknown> }[];

const dataKey = createHash('sha256').update('the local KMS key').digest();
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** ECDSA signatures differ each time; one per message keeps the SDK's and the adapter's readings comparable. */
const signatures = new Map<string, Buffer>();

const json = (response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) =>
  void response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', ...headers }).end(JSON.stringify(body));
const kmsError =
  (status: number, type: string, message = `key ${SYMMETRIC_KEY} says no`): Answer =>
  (_, response) =>
    json(response, status, { __type: type, message });

/** What a KMS key does: AES-GCM bound to the encryption context, deterministic so two clients read the same blob. */
function encrypt(plaintext: Buffer, context: unknown): Buffer {
  const iv = createHash('sha256').update(plaintext).update(JSON.stringify(context)).digest().subarray(0, 12);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv).setAAD(Buffer.from(JSON.stringify(context)));
  const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

function decrypt(blob: Buffer, context: unknown): Buffer | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, blob.subarray(0, 12)).setAAD(Buffer.from(JSON.stringify(context)));
    decipher.setAuthTag(blob.subarray(12, 28));
    return Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
  } catch {
    return undefined;
  }
}

const asKms: Answer = (request, response, body) => {
  const operation = String(request.headers['x-amz-target']).replace('TrentService.', '');
  if (operation === 'Encrypt') {
    const blob = encrypt(Buffer.from(body['Plaintext']!, 'base64'), body['EncryptionContext']);
    return json(response, 200, { CiphertextBlob: blob.toString('base64'), KeyId: body['KeyId'], EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
  }
  if (operation === 'Decrypt') {
    const plaintext = decrypt(Buffer.from(body['CiphertextBlob']!, 'base64'), body['EncryptionContext']);
    if (!plaintext) return kmsError(400, 'InvalidCiphertextException')(request, response, body);
    return json(response, 200, { Plaintext: plaintext.toString('base64'), KeyId: body['KeyId'], EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
  }
  if (operation === 'GetPublicKey') {
    const der = publicKey.export({ format: 'der', type: 'spki' });
    return json(response, 200, { KeyId: body['KeyId'], KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', PublicKey: der.toString('base64') });
  }
  if (operation === 'Sign') {
    let signature = signatures.get(body['Message']!);
    if (!signature) signatures.set(body['Message']!, (signature = sign('sha256', Buffer.from(body['Message']!, 'base64'), privateKey)));
    return json(response, 200, { KeyId: body['KeyId'], Signature: signature.toString('base64'), SigningAlgorithm: body['SigningAlgorithm'] });
  }
  kmsError(400, 'UnknownOperationException')(request, response, body);
};

beforeAll(async () => {
  stub = await startAwsServiceStub((request, response, text) => {
    const body = JSON.parse(text || '{}') as Record<string, string>;
    seen.push({
      target: String(request.headers['x-amz-target']),
      contentType: String(request.headers['content-type']),
      authorization: String(request.headers['authorization']),
      body,
    });
    (faults.shift() ?? asKms)(request, response, body);
  });
  endpoint = stub.endpoint;
});
afterAll(() => stub.close());
beforeEach(() => {
  faults = [];
  seen = [];
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const lean = () => new KmsRequests({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS });
const sdk = () => new KMSClient({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS });

describe('issue 15, item 4: the adapters on the lean KMS client read what the SDK client read', () => {
  it('issue 15: the credential cipher seals to the ciphertext blob the SDK reads, and opens it again under its context only', async () => {
    const kms = lean();
    const cipher = credentialCipherFor(SYMMETRIC_KEY, { kms: () => kms });
    const context = { subscription: 'sub-1', purpose: 'sink-credential' };
    const sealed = await cipher.encrypt('{"token":"heel geheim"}', context);
    const viaSdk = await sdk().send(
      new EncryptCommand({ KeyId: SYMMETRIC_KEY, Plaintext: Buffer.from('{"token":"heel geheim"}'), EncryptionContext: context }),
    );
    expect(sealed).toBe(`kms1.${Buffer.from(viaSdk.CiphertextBlob!).toString('base64url')}`);
    expect(await cipher.decrypt(sealed, context)).toBe('{"token":"heel geheim"}');
    const openedViaSdk = await sdk().send(new DecryptCommand({ KeyId: SYMMETRIC_KEY, CiphertextBlob: viaSdk.CiphertextBlob!, EncryptionContext: context }));
    expect(Buffer.from(openedViaSdk.Plaintext!).toString('utf8')).toBe('{"token":"heel geheim"}');
    await expect(cipher.decrypt(sealed, { ...context, subscription: 'sub-2' })).rejects.toMatchObject({ name: 'InvalidCiphertextException' });
    kms.destroy();
    expect(seen.filter((request) => !request.authorization.includes('AKIDKMSANSWERS'))).toEqual([]);
    expect(new Set(seen.map((request) => request.contentType))).toEqual(new Set(['application/x-amz-json-1.1']));
  });

  it('issue 12 #6, issue 15: the KMS signing key publishes the JWK of the DER key the SDK reads, and its r‖s is the DER signature the SDK reads', async () => {
    const kms = lean();
    const keys = signingKeysFor([SIGNING_KEY], { kms: () => kms });
    const key = await keys.current();
    const [jwk] = await keys.publicKeys();
    const described = await sdk().send(new GetPublicKeyCommand({ KeyId: SIGNING_KEY }));
    expect(jwk).toEqual(publicJwk(createPublicKey({ key: Buffer.from(described.PublicKey!), format: 'der', type: 'spki' }), 'ecdsa-p256-sha256'));
    const message = Buffer.from('"@method": POST\n"@signature-params": ("@method")');
    const signature = await key.sign(message);
    const signedViaSdk = await sdk().send(new SignCommand({ KeyId: SIGNING_KEY, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }));
    expect(signature).toEqual(ecdsaDerToRaw(Buffer.from(signedViaSdk.Signature!), 32));
    expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    kms.destroy();
    expect(seen.filter((request) => request.target === 'TrentService.Sign').map((request) => request.body)).toEqual([
      { KeyId: SIGNING_KEY, Message: message.toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256', MessageType: 'RAW' },
      { KeyId: SIGNING_KEY, Message: message.toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256', MessageType: 'RAW' },
    ]);
  });

  it('issue 15: without an endpoint option the client goes to AWS_ENDPOINT_URL_KMS, as the SDK does', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_KMS', endpoint);
    const kms = new KmsRequests({ region: 'eu-west-1', credentials: CREDENTIALS });
    expect(await kms.getPublicKey(SIGNING_KEY)).toMatchObject({ keySpec: 'ECC_NIST_P256', keyUsage: 'SIGN_VERIFY' });
    kms.destroy();
    expect(seen.map((request) => request.target)).toEqual(['TrentService.GetPublicKey']);
  });
});

describe('issue 15, item 4: the lean KMS client and KMS errors', () => {
  it('issue 15: a refusal throws at once, named by the code of a `namespace#Code` __type, with the status and nothing secret', async () => {
    faults = [kmsError(400, 'com.amazonaws.kms#NotFoundException', `Key '${SYMMETRIC_KEY}' does not exist`)];
    const kms = lean();
    const error = (await kms
      .encrypt({ keyId: SYMMETRIC_KEY, plaintext: Buffer.from('geheim'), encryptionContext: { a: 'b' } })
      .catch((e: unknown) => e)) as Error;
    kms.destroy();
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'NotFoundException', code: 'NotFoundException', statusCode: 400, operation: 'Encrypt' });
    expect(error.message).toBe('KMS Encrypt failed: NotFoundException (HTTP 400)');
    for (const secret of ['127.0.0.1', SYMMETRIC_KEY, 'geheim', 'Z2VoZWlt', CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey])
      expect(error.message).not.toContain(secret);
    expect(seen).toHaveLength(1);
  });

  it('issue 15: the code may come in the x-amzn-errortype header, with a URI after it, as the SDK reads it', async () => {
    faults = [
      (_, response) => json(response, 400, { message: 'm' }, { 'x-amzn-errortype': 'DisabledException:http://internal.amazon.com/coral/com.amazonaws.kms/' }),
    ];
    const kms = lean();
    await expect(kms.getPublicKey(SIGNING_KEY)).rejects.toThrow('KMS GetPublicKey failed: DisabledException (HTTP 400)');
    kms.destroy();
  });

  it('issue 15: throttling (400 ThrottlingException) and KMSInternalException (500) are retried as the SDK does, three attempts in all', async () => {
    faults = [kmsError(400, 'ThrottlingException'), kmsError(500, 'KMSInternalException')];
    const kms = lean();
    const blob = await kms.encrypt({ keyId: SYMMETRIC_KEY, plaintext: Buffer.from('derde keer'), encryptionContext: {} });
    expect(decrypt(blob!, {})?.toString()).toBe('derde keer');
    faults = [kmsError(503, 'KMSInternalException'), kmsError(503, 'KMSInternalException'), kmsError(503, 'KMSInternalException')];
    await expect(kms.decrypt({ keyId: SYMMETRIC_KEY, ciphertextBlob: blob!, encryptionContext: {} })).rejects.toThrow(
      'KMS Decrypt failed: KMSInternalException (HTTP 503)',
    );
    kms.destroy();
    expect(seen.map((request) => request.target)).toEqual([...Array<string>(3).fill('TrentService.Encrypt'), ...Array<string>(3).fill('TrentService.Decrypt')]);
  });

  it('issue 15: a client error other than throttling (InvalidCiphertextException) is not retried', async () => {
    const kms = lean();
    await expect(kms.decrypt({ keyId: SYMMETRIC_KEY, ciphertextBlob: Buffer.alloc(40, 1), encryptionContext: {} })).rejects.toMatchObject({
      name: 'InvalidCiphertextException',
      statusCode: 400,
    });
    kms.destroy();
    expect(seen).toHaveLength(1);
  });

  it('issue 15: a connection reset mid-request is retried, and every request sent is observed, each retry its own', async () => {
    faults = [(request) => request.socket.destroy()];
    const kms = lean();
    const attempts: unknown[] = [];
    kms.observeAttempts((attempt) => attempts.push(attempt));
    expect((await kms.getPublicKey(SIGNING_KEY)).publicKey).toEqual(publicKey.export({ format: 'der', type: 'spki' }));
    kms.destroy();
    expect(seen).toHaveLength(2);
    const requestBytes = JSON.stringify({ KeyId: SIGNING_KEY }).length;
    expect(attempts).toEqual([
      { operation: 'GetPublicKey', requestBytes },
      { operation: 'GetPublicKey', requestBytes, responseBytes: expect.any(Number) as number },
    ]);
  });
});
