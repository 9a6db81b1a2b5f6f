/** Lambda entry (functions/config/resources.ts): the replays app (functions/app/replays-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { replaysApp } from '../app/replays-app.js';
import {
  authenticate,
  idempotency,
  metrics,
  partners,
  quotaHolds,
  replayQueue,
  replayStore,
  subscriptions,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(replaysApp);
export const handler = handlerFor(
  lambdaDependencies({
    authenticate,
    idempotency,
    partners,
    subscriptions,
    replayStore,
    replayQueue,
    quotaHolds,
    metrics,
  }),
);
