/**
 * `koerier load`: a load generator a user points at a stack (issue 35). It offers `--rate` events a
 * second for `--duration` seconds (both required and bounded, so a typo cannot run unbounded),
 * singly or in batches of `--batch`, and reports accepted events a second, the 202 latency
 * (p50/p99/p99.9), errors by status and 429s. With `--pull-profile` it also makes a pull
 * subscription for the run as that profile's client, receives every event and reports the end-to-end
 * delay, and removes the subscription at the end. It runs on the generated client (client/) over an
 * undici connection pool sized to the requests in flight.
 */
import { randomUUID } from 'node:crypto';
// undici only for `koerier load` (its own connection pool): loaded by the command, so that every other
// command starts without it (about 0.3 s of each CLI start).
import type { Agent, fetch as undiciFetchType } from 'undici';
import type { Command } from 'commander';
import { createKoerierClient, type KoerierClient, type TokenSource } from '../../client/koerier-client.js';
import { API_BASE_PATH } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { formatReport, type LoadReport } from '../load/load-statistics.js';
import { publishOpenLoop } from '../load/open-loop-publisher.js';
import { startPullProbe } from '../load/pull-probe.js';
import { printJson } from '../output.js';
import { gatewayUrl, resolveSettings, type GlobalOptions } from '../settings.js';
import { cachedTokens } from '../tokens.js';
import { integer } from './send.js';

interface LoadOptions {
  readonly rate?: number;
  readonly duration?: number;
  readonly batch: number;
  readonly concurrency: number;
  readonly source: string;
  readonly type?: string;
  readonly pullProfile?: string;
  readonly drain: number;
}

/** The largest run: one hour at 50,000 events/s, the highest rate docs/SCALE.md plans for. */
export const LOAD_LIMITS = { rate: 50_000, durationSeconds: 3_600, batch: 100, concurrency: 1_024 } as const;

export function registerLoad(program: Command): void {
  program
    .command('load')
    .description('offer a steady rate of events for a fixed time and report throughput and latency')
    .option('--rate <events/s>', `events per second (1-${LOAD_LIMITS.rate}); required`, integer(1, LOAD_LIMITS.rate))
    .option(
      '--duration <seconds>',
      `how long to offer them (1-${LOAD_LIMITS.durationSeconds}); required`,
      integer(1, LOAD_LIMITS.durationSeconds),
    )
    .option('--batch <k>', `events per request (1: single publishes)`, integer(1, LOAD_LIMITS.batch), 1)
    .option('--concurrency <n>', 'requests in flight at most', integer(1, LOAD_LIMITS.concurrency), 64)
    .option('--source <uri>', 'the events’ source (one the client may publish)', 'urn:nld:koerier:load')
    .option('--type <type>', 'the events’ type (default: nl.koerier.load.<run id>, unique to the run)')
    .option(
      '--pull-profile <name>',
      'also measure the end-to-end delay: make a pull subscription as this profile’s client (koerier login --profile), receive every event, remove it',
    )
    .option('--drain <seconds>', 'with --pull-profile: how long to wait for the last events', integer(1, 600), 60)
    .addHelpText(
      'after',
      '\nNothing is retried: 429s and errors are counted. Exit status 1 when any request was refused or an event was not received.',
    )
    .action(async (options: LoadOptions, command: Command) => {
      if (options.rate === undefined || options.duration === undefined)
        throw new CliError('koerier load needs both --rate and --duration: a run is always bounded', exitCodes.usage);
      const globals = command.optsWithGlobals<GlobalOptions>();
      const settings = await resolveSettings(globals);
      const undici = await import('undici');
      const agent = new undici.Agent({ connections: options.concurrency, keepAliveTimeout: 30_000 });
      const baseUrl = `${gatewayUrl(settings)}${API_BASE_PATH}`;
      const publisher = loadClient(baseUrl, cachedTokens(settings), agent, undici.fetch);
      const runId = randomUUID();
      const type = options.type ?? `nl.koerier.load.${runId.slice(0, 8)}`;
      const probe = options.pullProfile
        ? await startPullProbe(await profileClient(globals, options.pullProfile, baseUrl, agent, undici.fetch), {
            type,
            runId,
            receivers: Math.min(8, Math.max(1, Math.ceil(options.rate / 200))),
          })
        : undefined;
      let report: LoadReport;
      try {
        // A token is fetched before the clock starts, so the first requests do not wait for it.
        await cachedTokens(settings).token();
        const publish = await publishOpenLoop(publisher, {
          rate: options.rate,
          durationSeconds: options.duration,
          batch: options.batch,
          concurrency: options.concurrency,
          source: options.source,
          type,
          runId,
        });
        report = { publish, ...(probe ? { endToEnd: await probe.finish(publish.accepted, options.drain) } : {}) };
      } catch (error) {
        await probe?.abandon();
        throw error;
      } finally {
        await agent.close();
      }
      if (settings.json) printJson(report);
      else process.stdout.write(formatReport(report));
      const refused = Object.keys(report.publish.errorsByStatus).length > 0;
      if (refused || (report.endToEnd?.missing ?? 0) > 0) process.exitCode = exitCodes.refused;
    });
}

type UndiciFetch = typeof undiciFetchType;

/** The generated client over the run's connection pool, retrying nothing (a 429 is a figure of the run). */
function loadClient(baseUrl: string, tokens: TokenSource, agent: Agent, undiciFetch: UndiciFetch): KoerierClient {
  return createKoerierClient({
    baseUrl,
    token: tokens,
    retries: 0,
    fetch: (request: Request) => pooledFetch(request, agent, undiciFetch),
  });
}

/**
 * A request of the global fetch sent through undici's own over the run's pool. openapi-fetch takes
 * only the global Response, so the answer is handed back as one.
 */
async function pooledFetch(request: Request, agent: Agent, undiciFetch: UndiciFetch): Promise<Response> {
  const answer = await undiciFetch(request.url, {
    method: request.method,
    headers: Object.fromEntries(request.headers),
    ...(request.body ? { body: await request.arrayBuffer() } : {}),
    signal: request.signal,
    dispatcher: agent,
  });
  const body = answer.status === 204 || answer.status === 304 ? null : await answer.arrayBuffer();
  return new Response(body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: Object.fromEntries(answer.headers),
  });
}

/** A client of another profile (the subscriber): its own client id and secret, not this run's environment. */
async function profileClient(
  globals: GlobalOptions,
  profile: string,
  baseUrl: string,
  agent: Agent,
  undiciFetch: UndiciFetch,
) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !['KOERIER_CLIENT_ID', 'KOERIER_CLIENT_SECRET', 'KOERIER_PROFILE', 'KOERIER_SCOPE'].includes(name),
    ),
  );
  const settings = await resolveSettings(
    {
      ...(globals.url ? { url: globals.url } : {}),
      ...(globals.tokenUrl ? { tokenUrl: globals.tokenUrl } : {}),
      profile,
    },
    env,
  );
  return loadClient(baseUrl, cachedTokens(settings), agent, undiciFetch);
}
