/**
 * `npm start`: the Koerier laptop host on http://127.0.0.1:$PORT (default 3000), state under
 * `./.koerier/`, development clients in `./koerier.local.json`. `--fresh` wipes the state first.
 * SIGINT or SIGTERM stops everything (queued messages are kept for the next start) and exits 0.
 * A second start on the same state exits 1 and names the host that runs there. The shell's
 * KOERIER_* variables are the functions' settings, on top of the host's own.
 */
import { join } from 'node:path';
import { banner } from './banner.js';
import { settingsFromEnvironment, startKoerierHost } from './host.js';
import { StateDirectoryInUseError } from './state-lock.js';

const USAGE = 'usage: npm start [-- --fresh]   (PORT=<port> to change the port; 0 picks a free one)';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const unknown = args.filter((arg) => arg !== '--fresh');
  if (unknown.length > 0) {
    process.stderr.write(`unknown argument ${unknown.join(' ')}\n${USAGE}\n`);
    process.exit(2);
  }
  const port = Number(process.env['PORT'] ?? '3000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`PORT must be a port number, got ${JSON.stringify(process.env['PORT'])}\n`);
    process.exit(2);
  }

  const cwd = process.cwd();
  const fresh = args.includes('--fresh');
  const host = await startKoerierHost({
    port,
    host: '127.0.0.1',
    stateDir: join(cwd, '.koerier'),
    configFile: join(cwd, 'koerier.local.json'),
    fresh,
    // The host reads no environment itself: the shell's Koerier settings (KOERIER_LOG_LEVEL, …) are passed on here.
    settings: settingsFromEnvironment(process.env),
  });
  process.stdout.write(banner(host, fresh));

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting without a clean stop\n`);
      process.exit(1);
    }
    stopping = true;
    process.stdout.write(`${signal}: stopping Koerier…\n`);
    host.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`Koerier did not stop cleanly: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  if (error instanceof StateDirectoryInUseError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Koerier could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exit(1);
});
