/** Lambda entry (lib/resources.ts): the delivery app (functions/app/delivery-app.ts) on this container's AWS dependencies. */
import { deliveryApp } from '../app/delivery-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(deliveryApp);
export const handler = handlerFor(awsDependencies);
