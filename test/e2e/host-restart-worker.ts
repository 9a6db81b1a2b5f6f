/**
 * The laptop host in a process of its own for the restart test: started on `./.koerier` and
 * `./koerier.local.json` of its working directory, with the handler settings of its environment.
 * Prints `ready <url>`; a line on stdin makes it stop the way Ctrl-C does (`host.stop()`), print
 * `stopped` and exit 0.
 */
import { join } from 'node:path';
import { settingsFromEnvironment, startKoerierHost } from '../../local/host.js';

const host = await startKoerierHost({
  port: 0,
  stateDir: join(process.cwd(), '.koerier'),
  configFile: join(process.cwd(), 'koerier.local.json'),
  log: () => undefined,
  // As `npm start` does: the KOERIER_* settings of this process's environment apply.
  settings: settingsFromEnvironment(process.env),
});
process.stdout.write(`ready ${host.url}\n`);
process.stdin.once('data', () => {
  void host.stop().then(() => {
    process.stdout.write('stopped\n');
    process.exit(0);
  });
});
