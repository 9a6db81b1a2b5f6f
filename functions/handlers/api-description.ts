/** Lambda entry (functions/config/resources.ts): the api-description app (functions/app/api-description-app.ts) on this container's AWS dependencies: only the adapters it reads (functions/composition/adapters.ts). */
import '../app/source-mapped-stacks.js';
import { apiDescriptionApp } from '../app/api-description-app.js';
import { metrics } from '../composition/adapters.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(apiDescriptionApp);
export const handler = handlerFor(lambdaDependencies({ metrics }));
