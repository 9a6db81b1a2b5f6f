/** Lambda entry (functions/config/resources.ts): the alerts app (functions/app/alerts-app.ts) on this container's AWS dependencies: only the adapters it reads. */
import '../app/source-mapped-stacks.js';
import { alertsApp } from '../app/alerts-app.js';
import { alertWebhook, metrics, subscriptions } from '../composition/adapters.js';
import { alertMailer, alertWindows } from '../composition/alert-builders.js';
import { lambdaDependencies } from '../composition/lambda-dependencies.js';
import { queueHandler } from './shared/sqs-event-source.js';

/** The same wiring on other dependencies: the laptop host passes its own. */
export const handlerFor = queueHandler(alertsApp);
export const handler = handlerFor(
  lambdaDependencies({ subscriptions, alertWindows, alertMailer, alertWebhook, metrics }),
);
