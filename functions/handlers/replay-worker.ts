/** Lambda entry (lib/resources.ts): the replay worker (functions/app/replay-worker-app.ts) on this container's AWS dependencies. */
import { replayWorkerApp } from '../app/replay-worker-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(replayWorkerApp);
export const handler = handlerFor(awsDependencies);
