/** Lambda entry (functions/config/resources.ts): the pull app (functions/app/pull-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { pullApp } from '../app/pull-app.js';
import {
  authenticate,
  claimCheckStore,
  deliveryState,
  givenUpLocks,
  idempotency,
  lockTokenKey,
  metrics,
  orderedLanes,
  outbox,
  partners,
  payloadLedger,
  pollLeases,
  pullQueues,
  pullSubscriptions,
  rejectionMarks,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(pullApp);
export const handler = handlerFor(
  lambdaDependencies({
    pullSubscriptions,
    authenticate,
    pullQueues,
    rejectionMarks,
    givenUpLocks,
    // A call with an Idempotency-Key (EDU-IDEM-3) goes through the guard and its store.
    idempotency,
    pollLeases,
    lockTokenKey,
    deliveryState,
    claimCheckStore,
    payloadLedger,
    partners,
    metrics,
    // Ordered subscriptions (issue 33): the lanes, and the outbox that queues a lane's next event on the subscription's queue.
    orderedLanes,
    outbox,
  }),
);
