/** Lambda entry (functions/config/resources.ts): the delivery-admin app (functions/app/delivery-admin-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { deliveryAdminApp } from '../app/delivery-admin-app.js';
import {
  authenticate,
  deliveryQueue,
  deliveryState,
  eventArchive,
  eventDeliveries,
  idempotency,
  metrics,
  outbox,
  operationalEvents,
  partners,
  routedEventRecords,
  subscriptions,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(deliveryAdminApp);
export const handler = handlerFor(
  lambdaDependencies({
    authenticate,
    idempotency,
    deliveryQueue,
    deliveryState,
    operationalEvents,
    partners,
    subscriptions,
    metrics,
    outbox,
    routedEventRecords,
    eventDeliveries,
    eventArchive,
  }),
);
