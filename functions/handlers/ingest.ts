/** Lambda entry (functions/config/resources.ts): the ingest app (functions/app/ingest-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { ingestApp } from '../app/ingest-app.js';
import {
  authenticate,
  claimCheckStore,
  idempotency,
  inboundQueue,
  metrics,
  orderingKeyRequirements,
  partners,
  payloadLedger,
  publishRateWindow,
  routedEventRecords,
} from '../composition/adapters.js';
import { dataContracts } from '../composition/data-contracts-adapter.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(ingestApp);
export const handler = handlerFor(
  lambdaDependencies({
    authenticate,
    idempotency,
    publishRateWindow,
    partners,
    dataContracts,
    inboundQueue,
    claimCheckStore,
    payloadLedger,
    routedEventRecords,
    orderingKeyRequirements,
    metrics,
  }),
);
