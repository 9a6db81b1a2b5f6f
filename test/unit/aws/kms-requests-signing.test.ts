/**
 * The lean KMS client (functions/aws/kms-requests.ts) against the real @aws-sdk/client-kms: the
 * same operation, with the same fixed clock and credentials, must go out as the same signed request
 * and read the same answer (issue 15, item 4). KMS has no emulator, so this is what shows AWS would
 * accept ours.
 *
 * Left out of the SDK's signing, and never sent by ours: `x-amz-user-agent`, `amz-sdk-invocation-id`
 * and `amz-sdk-request` (the SDK's own telemetry and retry bookkeeping; KMS requires none of them),
 * and the unsigned `user-agent`.
 */
import { DecryptCommand, EncryptCommand, GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import {
  capturingRequestHandler,
  capturingTransport,
  expectSameSignedRequest,
  FIXED_CREDENTIALS,
  jsonAnswer,
  signingAtFixedNow,
  withoutSdkOnlyHeaders,
  type CapturedRequest,
} from '../../support/sdk-request-capture.js';
import { describe, expect, it } from 'vitest';
import { KmsRequests } from '../../../functions/aws/kms-requests.js';

const CREDENTIALS = FIXED_CREDENTIALS;
const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

const answering = (answer: () => object) => jsonAnswer('application/x-amz-json-1.1', answer);

/** An SDK client whose requests are captured instead of sent, answered with `answer` (JSON). */
function sdkClient(region: string, sent: CapturedRequest[], answer: () => object, endpoint?: string): KMSClient {
  const requestHandler = capturingRequestHandler(sent, answering(answer));
  return withoutSdkOnlyHeaders(new KMSClient({ region, credentials: CREDENTIALS, ...(endpoint ? { endpoint } : {}), requestHandler }));
}

function leanClient(region: string, sent: CapturedRequest[], answer: () => object, endpoint?: string): KmsRequests {
  return new KmsRequests({ region, credentials: CREDENTIALS, ...(endpoint ? { endpoint } : {}), transport: capturingTransport(sent, answering(answer)) });
}

describe('issue 15, item 4: the lean KMS client signs and reads as @aws-sdk/client-kms does', () => {
  signingAtFixedNow();

  for (const region of ['eu-west-1', 'us-east-1']) {
    it(`issue 15: Encrypt with an encryption context of several pairs, in ${region}, and the ciphertext blob it reads`, async () => {
      const ours: CapturedRequest[] = [];
      const sdk: CapturedRequest[] = [];
      const answer = () => ({
        CiphertextBlob: Buffer.from([1, 2, 3, 250, 251, 252]).toString('base64'),
        KeyId: KEY_ARN,
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      });
      const plaintext = Buffer.from('{"kind":"bearer","token":"très geheim"}');
      const context = { subscription: 'sub-1', purpose: 'koerier-sink-credential' };
      const blob = await leanClient(region, ours, answer).encrypt({ keyId: KEY_ARN, plaintext, encryptionContext: context });
      const output = await sdkClient(region, sdk, answer).send(new EncryptCommand({ KeyId: KEY_ARN, Plaintext: plaintext, EncryptionContext: context }));
      expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-target']);
      expect(ours[0]!.url).toBe(`https://kms.${region}.amazonaws.com/`);
      expect(blob).toEqual(Buffer.from(output.CiphertextBlob!));
    });
  }

  it('issue 15: Decrypt with its key, blob and context, and the plaintext it reads', async () => {
    const ours: CapturedRequest[] = [];
    const sdk: CapturedRequest[] = [];
    const answer = () => ({ Plaintext: Buffer.alloc(32, 7).toString('base64'), KeyId: KEY_ARN, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
    const blob = Buffer.from('AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA+/w==', 'base64');
    const context = { purpose: 'koerier-lock-tokens' };
    const plaintext = await leanClient('eu-west-1', ours, answer).decrypt({ keyId: KEY_ARN, ciphertextBlob: blob, encryptionContext: context });
    const output = await sdkClient('eu-west-1', sdk, answer).send(new DecryptCommand({ KeyId: KEY_ARN, CiphertextBlob: blob, EncryptionContext: context }));
    expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-target']);
    expect(plaintext).toEqual(Buffer.from(output.Plaintext!));
  });

  it('issue 15: Sign of a RAW message with ECDSA_SHA_256, and the DER signature it reads', async () => {
    const ours: CapturedRequest[] = [];
    const sdk: CapturedRequest[] = [];
    const answer = () => ({ Signature: Buffer.from('3006020101020102', 'hex').toString('base64'), KeyId: KEY_ARN, SigningAlgorithm: 'ECDSA_SHA_256' });
    const message = Buffer.from('"@method": POST\n"@signature-params": ("@method");created=1764160496;keyid="k"');
    const signature = await leanClient('eu-west-1', ours, answer).sign({ keyId: KEY_ARN, message, signingAlgorithm: 'ECDSA_SHA_256' });
    const output = await sdkClient('eu-west-1', sdk, answer).send(
      new SignCommand({ KeyId: KEY_ARN, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }),
    );
    expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-target']);
    expect(signature).toEqual(Buffer.from(output.Signature!));
  });

  it('issue 15: GetPublicKey of an alias, sent to AWS_ENDPOINT_URL_KMS-style endpoint, and the key spec, usage and DER key it reads', async () => {
    const ours: CapturedRequest[] = [];
    const sdk: CapturedRequest[] = [];
    const der = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d03010703420004', 'hex');
    const answer = () => ({
      KeyId: KEY_ARN,
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      PublicKey: der.toString('base64'),
      SigningAlgorithms: ['ECDSA_SHA_256'],
    });
    const endpoint = 'http://127.0.0.1:4599';
    const key = await leanClient('eu-west-1', ours, answer, endpoint).getPublicKey('alias/koerier-signing');
    const output = await sdkClient('eu-west-1', sdk, answer, endpoint).send(new GetPublicKeyCommand({ KeyId: 'alias/koerier-signing' }));
    expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-target']);
    expect(ours[0]!.url).toBe('http://127.0.0.1:4599/');
    expect(key).toEqual({ keySpec: output.KeySpec, keyUsage: output.KeyUsage, publicKey: Buffer.from(output.PublicKey!) });
  });
});
