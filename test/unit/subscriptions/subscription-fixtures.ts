/**
 * The settings the subscription unit tests share: the input rules and service settings of an AWS
 * deployment (HTTPS on 443 only, OAuth2 sink credentials, a seven-day retry window).
 */
import type { InputRules } from '../../../functions/core/subscriptions/subscription-input.js';
import type { SubscriptionsSettings } from '../../../functions/core/subscriptions/subscriptions-service.js';

/** As if a credential were already stored (a PATCH without `sinkcredential`), so each case is about one member. */
export const awsInputRules: InputRules = {
  allowLoopbackSinks: false,
  allowedPorts: [443],
  sinkCredentials: 'oauth2-only',
  storedCredential: 'oauth2-client-credentials',
  maxRetryWindowSeconds: 7 * 24 * 3600,
};

export function subscriptionsSettings(overrides: Partial<SubscriptionsSettings> = {}): SubscriptionsSettings {
  return {
    allowLoopbackSinks: false,
    allowedPorts: [443],
    sinkCredentials: 'oauth2-only',
    webhookOrigin: 'koerier.test',
    publicBaseUrl: 'https://koerier.test',
    validationWindowSeconds: 3600,
    requestRatePerMinute: 60,
    validationAgreedClients: [],
    maxRetryWindowSeconds: 7 * 24 * 3600,
    ...overrides,
  };
}
