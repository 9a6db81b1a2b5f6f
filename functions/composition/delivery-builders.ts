/**
 * What the delivery function's dispatcher runs with besides its ports (functions/app/delivery-app.ts):
 * the policy its decisions follow, the sinks' access tokens and a short cache of the subscriptions.
 * Built here, once per composition, so what they keep lives as long as the container and the app
 * only hands them on.
 */
import { describeError } from '../app/logger.js';
import { queues } from '../config/resources.js';
import {
  openSinkCredential,
  type SinkCredential,
  type StoredSinkCredential,
} from '../core/credentials/sink-credential.js';
import { CredentialUnavailableError } from '../core/delivery/dispatch-ports.js';
import { cachedSubscriptions } from '../core/subscriptions/subscription-cache.js';
import { ClientCredentialsTokens, TOKEN_TIMEOUT_MS } from '../net/client-credentials-tokens.js';
import { credentialCipher, deliveryHttp, subscriptions } from './adapters.js';
import type { Member } from './composition.js';

/** How long admitted deliveries may wait in memory for their rate slot. */
const RATE_HORIZON_MS = 2_000;
/** How long a container trusts what it read about a subscription. */
const SUBSCRIPTION_CACHE_MS = 5_000;
/** Opened credentials a container keeps (each a secret in memory); past it, it starts again. */
const MAX_OPENED_CREDENTIALS = 1_000;

export const deliveryPolicy: Member<'deliveryPolicy'> = ({ config }) => {
  const settings = config.delivery;
  return {
    retry: settings.retry,
    breaker: settings.breaker,
    suspendAfterSeconds: settings.suspendAfterSeconds,
    keyTtlSeconds: config.idempotency.ttlSeconds,
    historySeconds: settings.historySeconds,
    deadLetterRetentionSeconds: settings.deadLetterRetentionSeconds,
    rateHorizonMs: RATE_HORIZON_MS,
    maxReceiveCount: queues.deliveries.maxReceiveCount,
    sendTimeoutMs: settings.connectTimeoutMs + settings.responseTimeoutMs,
    tokenTimeoutMs: TOKEN_TIMEOUT_MS,
    sinkCredentials: config.sinkCredentials,
  };
};

export const deliverySubscriptions: Member<'deliverySubscriptions'> = (c) =>
  cachedSubscriptions(subscriptions(c), SUBSCRIPTION_CACHE_MS, c.clock);

export const sinkAccessTokens: Member<'sinkAccessTokens'> = (c) => {
  const { log } = c;
  const tokens = new ClientCredentialsTokens(deliveryHttp(c), c.clock, log);
  // Decrypting costs a KMS call: once per stored credential per container; a failure is not kept.
  const opened = new Map<string, Promise<SinkCredential>>();
  const open = (stored: StoredSinkCredential, subscriptionId: string) => {
    let credential = opened.get(stored.ciphertext);
    if (!credential) {
      if (opened.size > MAX_OPENED_CREDENTIALS) opened.clear();
      credential = openSinkCredential(stored, subscriptionId, credentialCipher(c));
      credential.catch(() => opened.delete(stored.ciphertext));
      opened.set(stored.ciphertext, credential);
    }
    return credential;
  };
  return {
    async accessToken(subscription, options) {
      if (!subscription.credential) return undefined;
      let credential: SinkCredential;
      try {
        credential = await open(subscription.credential, subscription.id);
      } catch (error) {
        log.error('sink credential does not decrypt', { subscriptionId: subscription.id, error: describeError(error) });
        throw new CredentialUnavailableError('the stored credential could not be decrypted');
      }
      if (credential.kind === 'bearer') return credential.token;
      // A ZGW abonnement's `auth`: the whole Authorization value, opened only here (issue 34).
      if (credential.kind === 'authorization') return credential.value;
      return tokens.token(credential, options);
    },
  };
};
