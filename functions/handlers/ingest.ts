/** Lambda entry (lib/resources.ts): the ingest app (functions/app/ingest-app.ts) on this container's AWS dependencies. */
import { ingestApp } from '../app/ingest-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(ingestApp);
export const handler = handlerFor(awsDependencies);
