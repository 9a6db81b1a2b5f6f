/**
 * The first host of the disaster-recovery drill (test/e2e/disaster-recovery-drill.test.ts), in a
 * process of its own so the drill can kill it outright (SIGKILL: no stop, no flush) before it
 * destroys its state directory. Started on the state directory and configuration file named by its
 * arguments, with the handler settings of its environment (as `npm start`). Prints one line,
 * `ready <json>`: the host's URLs and how to reach its S3 and DynamoDB emulators, which the drill
 * copies the archive and the subscriptions from, as S3 replication and global tables would.
 */
import { settingsFromEnvironment, startKoerierHost } from '../../local/host.js';

const [stateDir, configFile] = process.argv.slice(2);
if (!stateDir || !configFile) throw new Error('usage: disaster-recovery-host.ts <stateDir> <configFile>');
const host = await startKoerierHost({
  port: 0,
  stateDir,
  configFile,
  log: () => undefined,
  settings: settingsFromEnvironment(process.env),
});
const ready = {
  url: host.url,
  apiUrl: host.apiUrl,
  s3: host.emulators.clientSettings('s3'),
  dynamodb: host.emulators.clientSettings('dynamodb'),
};
process.stdout.write(`ready ${JSON.stringify(ready)}\n`);
