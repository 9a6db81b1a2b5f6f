/** Lambda entry (lib/resources.ts): the partners admin app (functions/app/partners-app.ts) on this container's AWS dependencies. */
import { partnersApp } from '../app/partners-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(partnersApp);
export const handler = handlerFor(awsDependencies);
