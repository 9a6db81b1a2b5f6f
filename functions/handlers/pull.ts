/** Lambda entry (lib/resources.ts): the pull app (functions/app/pull-app.ts) on this container's AWS dependencies. */
import { pullApp } from '../app/pull-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(pullApp);
export const handler = handlerFor(awsDependencies);
