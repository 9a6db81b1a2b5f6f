/** Lambda entry (functions/config/resources.ts): the signing-keys app (functions/app/signing-keys-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { signingKeysApp } from '../app/signing-keys-app.js';
import { metrics, signingKeys } from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(signingKeysApp);
export const handler = handlerFor(lambdaDependencies({ signingKeys, metrics }));
