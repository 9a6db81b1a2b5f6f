/**
 * Issue 29, item 1: the delivery dispatcher's wiring, built by the composition
 * (functions/composition/delivery-builders.ts) instead of the delivery app: the sinks' access
 * tokens with their cache of opened credentials, and the policy from the configuration.
 */
import { describe, expect, it } from 'vitest';
import { clientAdmission } from '../../../functions/app/client-throttling.js';
import { createLogger } from '../../../functions/app/logger.js';
import { credentialCipher } from '../../../functions/composition/adapters.js';
import { createComposition } from '../../../functions/composition/composition.js';
import { deliveryPolicy, sinkAccessTokens } from '../../../functions/composition/delivery-builders.js';
import { loadConfig, settingEnv } from '../../../functions/config.js';
import { queues } from '../../../functions/config/resources.js';
import { sealSinkCredential, type CredentialCipher } from '../../../functions/core/credentials/sink-credential.js';
import { CredentialUnavailableError } from '../../../functions/core/delivery/dispatch-ports.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';

const config = loadConfig({
  [settingEnv.issuer]: 'https://issuer.test',
  [settingEnv.audience]: 'koerier',
  [settingEnv.jwksUrl]: 'https://issuer.test/jwks',
  AWS_REGION: 'eu-central-1',
});

/** A cipher that only encodes, counts its decrypts, and fails the first `failures` of them. */
function countingCipher(failures = 0): CredentialCipher & { decrypts: number } {
  let left = failures;
  const cipher = {
    decrypts: 0,
    encrypt: async (plaintext: string) => Buffer.from(plaintext).toString('base64'),
    decrypt: async (ciphertext: string) => {
      cipher.decrypts++;
      if (left-- > 0) throw new Error('the key service is down');
      return Buffer.from(ciphertext, 'base64').toString();
    },
  };
  return cipher;
}

/** A composition whose credential cipher is `cipher` (the builder keeps itself, so this is the one it reads). */
function compositionWith(cipher: CredentialCipher) {
  const log = createLogger('error');
  const composition = createComposition({
    config,
    log,
    admission: clientAdmission(config, log),
    clock: () => 0,
    options: {},
    clients: (kind) => kind.create(),
  });
  composition.once(credentialCipher, () => cipher);
  return composition;
}

async function subscriptionWithBearer(cipher: CredentialCipher, id = 'sub-1'): Promise<Subscription> {
  const credential = await sealSinkCredential({ kind: 'bearer', token: 'sink-token' }, id, cipher);
  return { id, credential } as Subscription;
}

describe('the delivery wiring the composition builds', () => {
  it("issue 29 item 1, WH-3: a subscription's stored credential is decrypted once per container, whatever the number of deliveries", async () => {
    const cipher = countingCipher();
    const tokens = sinkAccessTokens(compositionWith(cipher));
    const subscription = await subscriptionWithBearer(cipher);
    expect(await tokens.accessToken(subscription)).toBe('sink-token');
    expect(await tokens.accessToken(subscription)).toBe('sink-token');
    expect(await tokens.accessToken({ ...subscription })).toBe('sink-token');
    expect(cipher.decrypts).toBe(1);
  });

  it('issue 29 item 1, WH-3: a credential that does not decrypt is unavailable for that attempt and tried again on the next', async () => {
    const cipher = countingCipher(1);
    const tokens = sinkAccessTokens(compositionWith(cipher));
    const subscription = await subscriptionWithBearer(cipher);
    await expect(tokens.accessToken(subscription)).rejects.toBeInstanceOf(CredentialUnavailableError);
    expect(await tokens.accessToken(subscription)).toBe('sink-token');
    expect(cipher.decrypts).toBe(2);
  });

  it('issue 29 item 1: a subscription without a credential has no token, and nothing is decrypted', async () => {
    const cipher = countingCipher();
    const tokens = sinkAccessTokens(compositionWith(cipher));
    expect(await tokens.accessToken({ id: 'sub-2' } as Subscription)).toBeUndefined();
    expect(cipher.decrypts).toBe(0);
  });

  it("issue 29 item 1: the delivery policy is the configuration's, with the deliveries queue's redrive threshold", () => {
    const policy = deliveryPolicy(compositionWith(countingCipher()));
    expect(policy.retry).toBe(config.delivery.retry);
    expect(policy.keyTtlSeconds).toBe(config.idempotency.ttlSeconds);
    expect(policy.sendTimeoutMs).toBe(config.delivery.connectTimeoutMs + config.delivery.responseTimeoutMs);
    expect(policy.maxReceiveCount).toBe(queues.deliveries.maxReceiveCount);
    expect(policy.sinkCredentials).toBe(config.sinkCredentials);
  });
});
