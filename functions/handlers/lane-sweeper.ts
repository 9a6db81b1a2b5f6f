/** Lambda entry (functions/config/resources.ts): the lane sweeper (functions/app/lane-sweeper-app.ts), on a schedule, on this container's AWS dependencies: only the adapters it reads. */
import '../app/source-mapped-stacks.js';
import { laneSweeperApp } from '../app/lane-sweeper-app.js';
import { laneSweepIndex, metrics, orderedLanes, outbox, subscriptions } from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { scheduledHandler } from './shared/scheduled-event.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = scheduledHandler(laneSweeperApp);
export const handler = handlerFor(lambdaDependencies({ laneSweepIndex, orderedLanes, outbox, subscriptions, metrics }));
