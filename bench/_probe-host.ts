/**
 * The laptop host a bench drives (the delivery, pull, replay and ordered-delivery benches): in a
 * directory of its own, on a free port, silent, at the log level `BENCH_LOG_LEVEL` (default
 * `error`), with the caller's settings over the environment's. `stop` stops it and removes the
 * directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingEnv } from '../functions/config.js';
import { settingsFromEnvironment, startKoerierHost, type KoerierHost } from '../local/host.js';

export interface BenchHost {
  readonly host: KoerierHost;
  /** The bench's own directory, for files it writes beside the host's state (a CA file). */
  readonly dir: string;
  stop(): Promise<void>;
}

export async function startBenchHost(
  name: string,
  options: {
    /** Written into the directory before the host starts, with the settings that name them. */
    readonly prepare?: (dir: string) => Promise<Record<string, string>>;
    readonly settings?: Record<string, string>;
    readonly queueTriggers?: readonly string[];
  } = {},
): Promise<BenchHost> {
  const dir = await mkdtemp(join(tmpdir(), `koerier-bench-${name}-`));
  const prepared = (await options.prepare?.(dir)) ?? {};
  const host = await startKoerierHost({
    port: 0,
    stateDir: join(dir, 'state'),
    configFile: join(dir, 'koerier.local.json'),
    log: (line: string) => console.log('HOSTLOG', line),
    settings: {
      ...settingsFromEnvironment(process.env),
      ...prepared,
      ...options.settings,
      [settingEnv.logLevel]: process.env['BENCH_LOG_LEVEL'] ?? 'error',
    },
    ...(options.queueTriggers === undefined ? {} : { queueTriggers: [...options.queueTriggers] }),
  });
  return {
    host,
    dir,
    stop: async () => {
      await host.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
