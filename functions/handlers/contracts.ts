/** Lambda entry (lib/resources.ts): the contract register (functions/app/contracts-app.ts) on this container's AWS dependencies. */
import { contractsApp } from '../app/contracts-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(contractsApp);
export const handler = handlerFor(awsDependencies);
