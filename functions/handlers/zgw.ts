/** Lambda entry (functions/config/resources.ts): the ZGW Notificaties API app (functions/app/zgw-app.ts, issue 34) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { zgwApp } from '../app/zgw-app.js';
import {
  claimCheckStore,
  credentialCipher,
  handshakeHttp,
  idempotency,
  inboundQueue,
  metrics,
  orderingKeyRequirements,
  partners,
  payloadLedger,
  publishRateWindow,
  routedEventRecords,
  subscriptions,
  zgwStore,
} from '../composition/adapters.js';
import { dataContracts } from '../composition/data-contracts-adapter.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(zgwApp);
export const handler = handlerFor(
  lambdaDependencies({
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
    credentialCipher,
    zgwStore,
    handshakeHttp,
    subscriptions,
  }),
);
