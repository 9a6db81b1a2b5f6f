/** Lambda entry (lib/resources.ts): the router app (functions/app/router-app.ts) on this container's AWS dependencies. */
import { routerApp } from '../app/router-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(routerApp);
export const handler = handlerFor(awsDependencies);
