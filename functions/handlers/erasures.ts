/** Lambda entry (functions/config/resources.ts): the erasure API (functions/app/erasures-app.ts) on this container's AWS dependencies: only the adapters it reads. */
import '../app/source-mapped-stacks.js';
import { erasuresApp } from '../app/erasures-app.js';
import { authenticate, idempotency, lockTokenKey, metrics } from '../composition/adapters.js';
import { erasureQueue, erasureStore } from '../composition/erasure-builders.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(erasuresApp);
export const handler = handlerFor(
  lambdaDependencies({ authenticate, idempotency, erasureStore, erasureQueue, lockTokenKey, metrics }),
);
