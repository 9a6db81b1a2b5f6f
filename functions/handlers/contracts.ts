/** Lambda entry (functions/config/resources.ts): the contract register (functions/app/contracts-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { contractsApp } from '../app/contracts-app.js';
import {
  authenticate,
  contractDocuments,
  contractLifecycle,
  contractStore,
  idempotency,
  metrics,
  partners,
  subscriptions,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(contractsApp);
export const handler = handlerFor(
  lambdaDependencies({
    authenticate,
    idempotency,
    contractStore,
    contractDocuments,
    contractLifecycle,
    subscriptions,
    partners,
    metrics,
  }),
);
