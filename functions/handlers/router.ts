/** Lambda entry (functions/config/resources.ts): the router app (functions/app/router-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { routerApp } from '../app/router-app.js';
import { eventArchive, metrics, outbox, partners, routedEvents, subscriptionMatcher } from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(routerApp);
export const handler = handlerFor(
  lambdaDependencies({
    subscriptionMatcher,
    routedEvents,
    partners,
    eventArchive,
    metrics,
    outbox,
  }),
);
