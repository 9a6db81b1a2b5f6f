/** Lambda entry (functions/config/resources.ts): the claim check's data URL (functions/app/payloads-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { payloadsApp } from '../app/payloads-app.js';
import {
  authenticate,
  claimCheckStore,
  idempotency,
  metrics,
  partners,
  payloadLedger,
  uploadUsage,
} from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(payloadsApp);
export const handler = handlerFor(
  lambdaDependencies({
    authenticate,
    idempotency,
    claimCheckStore,
    payloadLedger,
    partners,
    uploadUsage,
    metrics,
  }),
);
