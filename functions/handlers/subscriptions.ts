/** Lambda entry (functions/config/resources.ts): the subscriptions app (functions/app/subscriptions-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { subscriptionsApp } from '../app/subscriptions-app.js';
import {
  authenticate,
  credentialCipher,
  eventArchive,
  handshakeHttp,
  idempotency,
  metrics,
  partners,
  pullQueues,
  quotaHolds,
  subscriptions,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(subscriptionsApp);
export const handler = handlerFor(
  lambdaDependencies({
    authenticate,
    idempotency,
    subscriptions,
    partners,
    pullQueues,
    quotaHolds,
    credentialCipher,
    handshakeHttp,
    eventArchive,
    metrics,
  }),
);
