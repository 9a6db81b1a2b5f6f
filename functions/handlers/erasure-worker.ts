/** Lambda entry (functions/config/resources.ts): the erasure worker (functions/app/erasure-worker-app.ts) on this container's AWS dependencies: only the adapters it reads. */
import '../app/source-mapped-stacks.js';
import { erasureWorkerApp } from '../app/erasure-worker-app.js';
import { metrics } from '../composition/adapters.js';
import { erasableStores, erasureQueue, erasureStore } from '../composition/erasure-builders.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(erasureWorkerApp);
export const handler = handlerFor(lambdaDependencies({ erasureStore, erasureQueue, erasableStores, metrics }));
