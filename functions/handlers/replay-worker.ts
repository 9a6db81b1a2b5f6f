/** Lambda entry (functions/config/resources.ts): the replay worker (functions/app/replay-worker-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { replayWorkerApp } from '../app/replay-worker-app.js';
import {
  eventArchive,
  metrics,
  outbox,
  operationalEvents,
  partners,
  replayQueue,
  replayStore,
  subscriptions,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(replayWorkerApp);
export const handler = handlerFor(
  lambdaDependencies({
    subscriptions,
    partners,
    eventArchive,
    replayStore,
    replayQueue,
    operationalEvents,
    metrics,
    outbox,
  }),
);
