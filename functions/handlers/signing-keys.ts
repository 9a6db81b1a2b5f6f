/** Lambda entry (lib/resources.ts): the signing-keys app (functions/app/signing-keys-app.ts) on this container's AWS dependencies. */
import { signingKeysApp } from '../app/signing-keys-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(signingKeysApp);
export const handler = handlerFor(awsDependencies);
