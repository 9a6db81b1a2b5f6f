/**
 * The laptop host's delivery worker on its own — the delivery handler behind its SQS poller — as
 * a separate process, so that the crash test can kill it with SIGKILL in the middle of a run and
 * start it again. Everything it needs (emulator endpoints, resource names, settings) comes from
 * the environment its parent hands it. Prints `ready` once it polls.
 */
import { functions, resourceEnv } from '../../functions/config/resources.js';
import { startPoller } from '../../local/event-source-poller.js';

const { handler } = await import('../../functions/handlers/delivery.js');
await startPoller({
  queueUrl: process.env[resourceEnv.queueUrl('deliveries')]!,
  handler: handler as never,
  functionName: 'delivery',
  batchSize: functions.delivery.queueTrigger.batchSize,
  timeoutSeconds: functions.delivery.timeoutSeconds,
  waitTimeSeconds: 1,
  concurrency: 4,
  log: () => undefined,
});
process.stdout.write('ready\n');
