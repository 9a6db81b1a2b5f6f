/**
 * The laptop host of test/e2e/ordered-failures-restart.test.ts, in a process of its own so the test
 * can kill it outright (SIGKILL: no stop, no flush) in the middle of ordered deliveries and start
 * another on the same state directory. Started on the state directory and configuration file named
 * by its arguments, with the handler settings of its environment (as `npm start`). Its log lines
 * go to stderr (the test reads them for late appends). Prints one line, `ready <json>`: the host's
 * URLs, how to reach its SQS emulator, the URLs of its inbound and deliveries queues, and how many
 * messages each queue got back from the journal at start.
 */
import { resourceEnv } from '../../functions/config/resources.js';
import { settingsFromEnvironment, startKoerierHost } from '../../local/host.js';

const [stateDir, configFile] = process.argv.slice(2);
if (!stateDir || !configFile) throw new Error('usage: ordered-restart-host.ts <stateDir> <configFile>');
const host = await startKoerierHost({
  port: 0,
  stateDir,
  configFile,
  log: (line) => process.stderr.write(`${line}\n`),
  settings: settingsFromEnvironment(process.env),
});
const ready = {
  url: host.url,
  apiUrl: host.apiUrl,
  sqs: host.emulators.clientSettings('sqs'),
  inboundQueueUrl: host.environment[resourceEnv.queueUrl('inbound')],
  deliveriesQueueUrl: host.environment[resourceEnv.queueUrl('deliveries')],
  restoredMessages: host.emulators.restoredMessages,
};
process.stdout.write(`ready ${JSON.stringify(ready)}\n`);
