/** Lambda entry (lib/resources.ts): the subscriptions app (functions/app/subscriptions-app.ts) on this container's AWS dependencies. */
import { subscriptionsApp } from '../app/subscriptions-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(subscriptionsApp);
export const handler = handlerFor(awsDependencies);
