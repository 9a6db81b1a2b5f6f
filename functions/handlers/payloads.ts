/** Lambda entry (lib/resources.ts): the claim check's data URL (functions/app/payloads-app.ts) on this container's AWS dependencies. */
import { payloadsApp } from '../app/payloads-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(payloadsApp);
export const handler = handlerFor(awsDependencies);
