/** Lambda entry (lib/resources.ts): the replays app (functions/app/replays-app.ts) on this container's AWS dependencies. */
import { replaysApp } from '../app/replays-app.js';
import { awsDependencies } from '../composition/aws-dependencies.js';
import { httpHandler } from './shared/api-gateway.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = httpHandler(replaysApp);
export const handler = handlerFor(awsDependencies);
