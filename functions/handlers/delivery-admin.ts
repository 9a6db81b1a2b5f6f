/** Lambda entry (lib/resources.ts): the delivery-admin app (functions/app/delivery-admin-app.ts) on this container's AWS dependencies. */
import { deliveryAdminApp } from '../app/delivery-admin-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(deliveryAdminApp);
export const handler = handlerFor(awsDependencies);
