/** Lambda entry (functions/config/resources.ts): the partners admin app (functions/app/partners-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { partnersApp } from '../app/partners-app.js';
import { authenticate, credentialCipher, idempotency, metrics, partnerStore } from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(partnersApp);
export const handler = handlerFor(
  lambdaDependencies({ authenticate, idempotency, partnerStore, credentialCipher, metrics }),
);
