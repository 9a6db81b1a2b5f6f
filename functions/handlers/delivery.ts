/** Lambda entry (functions/config/resources.ts): the delivery app (functions/app/delivery-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { deliveryApp } from '../app/delivery-app.js';
import {
  claimCheckStore,
  deliveryHttp,
  deliveryQueue,
  deliveryState,
  metrics,
  outbox,
  orderedLanes,
  operationalEvents,
  partners,
  payloadLedger,
  recordDeliveryMetrics,
  signingKeys,
} from '../composition/adapters.js';
import { deliveryPolicy, deliverySubscriptions, sinkAccessTokens } from '../composition/delivery-builders.js';
import { alertQueue } from '../composition/alert-builders.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(deliveryApp);
export const handler = handlerFor(
  lambdaDependencies({
    deliverySubscriptions,
    sinkAccessTokens,
    deliveryPolicy,
    deliveryQueue,
    deliveryState,
    deliveryHttp,
    signingKeys,
    claimCheckStore,
    payloadLedger,
    operationalEvents,
    alertQueue,
    partners,
    metrics,
    outbox,
    orderedLanes,
    recordDeliveryMetrics,
  }),
);
