/**
 * Soak of the laptop host (review #23, issue 15 item 7): `npm start` in a process of its own, a
 * steady stream of events published at POST /v1/events to one push subscriber (a local HTTPS
 * receiver), for ten minutes. Every 30 s it samples the host's resident memory (RSS), the size of
 * its state directory, how many events were accepted and delivered (the window's throughput), and
 * the delivery latency (202 → receiver) of that window. A probe loaded into the host
 * (bench/support/memory-probe.ts) adds the host's memory split (JavaScript heap, external, array
 * buffers), its RSS and live heap right after a full collection, its CPU time per event, its
 * longest event-loop stall and its GC pauses. The goals: RSS flat after warm-up (growth under 10 %,
 * judged after a full collection, the momentary RSS beside it), no 5xx answer, every accepted event
 * delivered, the state directory bounded by the TTLs (here the shortest the settings allow, 60 s,
 * so the bound shows within minutes). What was found: docs/PERFORMANCE.md, "Soak".
 *
 *   npm run soak -- [--duration <seconds, default 600>] [--rate <events/s, default 20>]
 *                   [--warmup <seconds, default 60>] [--sample-every <seconds, default 30>]
 *                   [--out <file, default bench/results/soak.json>] [--host-log <file>]
 *                   [--heap-snapshots <seconds,seconds,…> --snapshot-dir <dir>]
 *
 * Heap snapshots stop the host for seconds and leave its RSS hundreds of MB higher: a run that
 * takes them is for finding what is retained, not for its figures.
 *
 * Not part of `npm run bench` (it takes minutes); its last result is in bench/results/soak.json.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { readdir, readFile, rm, stat, writeFile, mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { settingEnv } from '../functions/config.js';
import { defaultLocalConfig } from '../local/local-config-file.js';
import { createLocalCertificateAuthority, startHttpsReceiver } from '../test/support/https-receiver.js';
import { callApi, tryPublish } from '../test/support/koerier-api.js';

const REPOSITORY = fileURLToPath(new URL('../', import.meta.url));
/**
 * Review #14 makes a push subscription carry a credential; receivers that run their own token
 * endpoint offer one as `sinkCredential`. Passed on when the receiver has it.
 */
function sinkCredentialOf(receiver: object): Record<string, unknown> {
  return 'sinkCredential' in receiver ? { sinkcredential: receiver.sinkCredential } : {};
}

const TTL_SECONDS = 60;

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}
function textArgument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : (process.argv[index + 1] ?? fallback);
}

const durationSeconds = argument('duration', 600);
const rate = argument('rate', 20);
const warmupSeconds = argument('warmup', 60);
const sampleEveryMs = argument('sample-every', 30) * 1000;
const out = textArgument('out', join(REPOSITORY, 'bench', 'results', 'soak.json'));
/** Seconds into the run at which the host writes a V8 heap snapshot (`--heap-snapshots 60,300`), into --snapshot-dir. */
const snapshotAt = textArgument('heap-snapshots', '')
  .split(',')
  .filter(Boolean)
  .map(Number)
  .filter((value) => Number.isFinite(value) && value >= 0);
const snapshotDir = textArgument('snapshot-dir', tmpdir());
/** Where the host's own log lines go (discarded when absent). */
const hostLog = textArgument('host-log', '');

/** Resident set size of a process, in MB (Linux /proc; `ps` elsewhere). */
async function rssMb(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Math.round(kb / 102.4) / 10;
  } catch {
    const ps = spawn('ps', ['-o', 'rss=', '-p', String(pid)]);
    let text = '';
    ps.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    await new Promise((resolve) => ps.once('exit', resolve));
    return Math.round(Number(text.trim()) / 102.4) / 10;
  }
}

async function directoryBytes(path: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(child);
    else if (entry.isFile()) total += (await stat(child).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const cwd = await mkdtemp(join(tmpdir(), 'koerier-soak-'));
  const authority = createLocalCertificateAuthority();
  await writeFile(join(cwd, 'ca.pem'), authority.certificatePem);
  const config = { ...defaultLocalConfig(), validationAgreedClients: ['dev-subscriber'] };
  await writeFile(join(cwd, 'koerier.local.json'), JSON.stringify(config), { mode: 0o600 });

  const latencies: number[] = [];
  let delivered = 0;
  const receiver = await startHttpsReceiver({
    authority,
    script: (_n, request) => {
      delivered += 1;
      const sentAt = (JSON.parse(request.body) as { data?: { sentAt?: number } }).data?.sentAt;
      if (typeof sentAt === 'number') latencies.push(request.receivedAt - sentAt);
      return { respond: 204 };
    },
  });

  // node directly (not the tsx wrapper): the pid whose memory is measured is the host itself.
  // The probe (bench/support/memory-probe.ts) writes the host's memory split and stalls to a file beside its state.
  const memoryFile = join(cwd, 'memory.jsonl');
  const probe = join(REPOSITORY, 'bench', 'support', 'memory-probe.ts');
  const nodeOptions = [
    '--import',
    import.meta.resolve('tsx'),
    '--import',
    pathToFileURL(probe).href,
    '--heapsnapshot-signal=SIGUSR2',
    '--expose-gc',
    `--diagnostic-dir=${snapshotDir}`,
  ];
  const host = spawn(process.execPath, [...nodeOptions, join(REPOSITORY, 'local', 'main.ts')], {
    cwd,
    env: {
      ...process.env,
      SOAK_PROBE_FILE: memoryFile,
      // Not KOERIER_ settings (the host passes those to the functions). One full collection per sample interval.
      SOAK_PROBE_SETTLED_EVERY_MS: String(sampleEveryMs),
      PORT: '0',
      [settingEnv.outboundCaFile]: join(cwd, 'ca.pem'),
      [settingEnv.publishRatePerMinute]: String(Math.ceil(rate * 60 * 2)),
      [settingEnv.idempotencyTtlSeconds]: String(TTL_SECONDS),
      [settingEnv.deliveryHistorySeconds]: String(TTL_SECONDS),
      [settingEnv.logLevel]: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let banner = '';
  // Read the banner, then keep draining the request log so the pipe never fills.
  const hostLogStream = hostLog ? createWriteStream(hostLog) : undefined;
  host.stdout.on('data', (chunk: Buffer) => {
    if (banner.length < 10_000) banner += chunk.toString();
    hostLogStream?.write(chunk);
  });
  host.stderr.on('data', (chunk: Buffer) => hostLogStream?.write(chunk));
  const deadline = Date.now() + 60_000;
  while (!/Token\s+http:\/\/\S+/.test(banner)) {
    if (host.exitCode !== null || Date.now() > deadline) throw new Error(`the host did not start:\n${banner}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The API (under /v1) and the origin its token endpoint is on.
  const apiUrl = /API\s+(http:\/\/\S+)/.exec(banner)![1]!;
  const url = new URL(/Token\s+(http:\/\/\S+)/.exec(banner)![1]!).origin;
  const pid = host.pid!;

  const token = async (clientId: string) => {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: config.clients[clientId]!.secret,
    });
    return (
      (await (await fetch(`${url}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }
    ).access_token;
  };
  const subscriber = await token('dev-subscriber');
  let publisher = await token('dev-publisher');
  const type = 'nl.example.soak.v1';
  const created = await callApi(apiUrl, subscriber, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    ...sinkCredentialOf(receiver),
  });
  if (created.status !== 201) throw new Error(`subscription: ${created.status} ${created.text}`);

  let accepted = 0;
  const refused: Record<string, number> = {};
  let failed = 0;
  const publishOne = async () => {
    try {
      // Answered whatever its status and never retried: every refusal is counted, a 5xx among them.
      const response = await tryPublish(apiUrl, publisher, {
        specversion: '1.0',
        id: randomUUID(),
        source: 'urn:nld:oin:00000001234567890000:systeem:soak',
        type,
        data: { sentAt: Date.now() },
      });
      if (response.status === 202) accepted += 1;
      else refused[response.status] = (refused[response.status] ?? 0) + 1;
    } catch {
      failed += 1;
    }
  };

  interface Sample {
    readonly atSeconds: number;
    readonly rssMb: number;
    readonly stateDirMb: number;
    readonly accepted: number;
    readonly delivered: number;
    readonly latencyP50Ms: number | null;
    readonly latencyP99Ms: number | null;
    /** Accepted and delivered per second since the previous sample. */
    readonly acceptedPerSecond: number;
    readonly deliveredPerSecond: number;
    /** The machine's 1-minute load average: the soak shares its cores with whatever else runs. */
    readonly loadAverage: number;
    /** The host's own split at the sample (bench/support/memory-probe.ts): JavaScript heap vs native memory. */
    readonly heapUsedMb: number | null;
    readonly heapTotalMb: number | null;
    readonly externalMb: number | null;
    readonly arrayBuffersMb: number | null;
    /** The host's longest event-loop stall, and its garbage collector's pauses (total, longest), since the previous sample. */
    readonly loopDelayMaxMs: number | null;
    readonly gcPauseMs: number | null;
    readonly gcMaxPauseMs: number | null;
    /** The host's CPU time (user + system) since the previous sample, as a share of one core, and per event accepted. */
    readonly hostCpuPercentOfOneCore: number | null;
    readonly hostCpuMsPerEvent: number | null;
    /**
     * The host's RSS and live heap right after a full garbage collection (the probe's latest
     * `settled` line, at most one sample interval old): what it retains, without V8's sawtooth.
     */
    readonly settledRssMb: number | null;
    readonly settledHeapUsedMb: number | null;
    /** V8's heap spaces after that collection: reserved (`size`) against live (`used`), in MB. */
    readonly settledHeapSpacesMb: Readonly<Record<string, { readonly size: number; readonly used: number }>> | null;
  }
  interface ProbeLine {
    readonly kind?: 'settled';
    readonly at: number;
    readonly rssMb: number;
    readonly spacesMb?: Sample['settledHeapSpacesMb'];
    readonly heapUsedMb: number;
    readonly heapTotalMb: number;
    readonly externalMb: number;
    readonly arrayBuffersMb: number;
    readonly loopDelayMaxMs: number;
    readonly gcPauseMs: number;
    readonly gcMaxPauseMs: number;
    readonly cpuMs?: number;
  }
  let probeLinesRead = 0;
  const probeWindow = async (): Promise<
    Pick<
      Sample,
      | 'heapUsedMb'
      | 'heapTotalMb'
      | 'externalMb'
      | 'arrayBuffersMb'
      | 'loopDelayMaxMs'
      | 'gcPauseMs'
      | 'gcMaxPauseMs'
      | 'settledRssMb'
      | 'settledHeapUsedMb'
      | 'settledHeapSpacesMb'
    > & { cpuMs: number | null }
  > => {
    const all = (await readFile(memoryFile, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ProbeLine);
    const fresh = all.slice(probeLinesRead);
    probeLinesRead = all.length;
    const window = fresh.filter((line) => line.kind === undefined);
    const latest = all.filter((line) => line.kind === undefined).at(-1);
    const settled = all.filter((line) => line.kind === 'settled').at(-1);
    const most = (pick: (line: ProbeLine) => number) => (window.length === 0 ? null : Math.max(...window.map(pick)));
    return {
      heapUsedMb: latest?.heapUsedMb ?? null,
      heapTotalMb: latest?.heapTotalMb ?? null,
      externalMb: latest?.externalMb ?? null,
      arrayBuffersMb: latest?.arrayBuffersMb ?? null,
      loopDelayMaxMs: most((line) => line.loopDelayMaxMs),
      gcPauseMs: window.length === 0 ? null : window.reduce((sum, line) => sum + line.gcPauseMs, 0),
      gcMaxPauseMs: most((line) => line.gcMaxPauseMs),
      cpuMs: window.length === 0 ? null : window.reduce((sum, line) => sum + (line.cpuMs ?? 0), 0),
      settledRssMb: settled?.rssMb ?? null,
      settledHeapUsedMb: settled?.heapUsedMb ?? null,
      settledHeapSpacesMb: settled?.spacesMb ?? null,
    };
  };
  const samples: Sample[] = [];
  const started = Date.now();
  let previous = { at: started, accepted: 0, delivered: 0 };
  const sample = async () => {
    const window = latencies.splice(0);
    const now = Date.now();
    const elapsedSeconds = Math.max(0.001, (now - previous.at) / 1000);
    const perSecond = (count: number) => Math.round((count / elapsedSeconds) * 10) / 10;
    const { cpuMs, ...probed } = await probeWindow();
    const entry: Sample = {
      atSeconds: Math.round((now - started) / 1000),
      rssMb: await rssMb(pid),
      stateDirMb: Math.round((await directoryBytes(join(cwd, '.koerier'))) / 104857.6) / 10,
      accepted,
      delivered,
      latencyP50Ms: percentile(window, 50),
      latencyP99Ms: percentile(window, 99),
      acceptedPerSecond: perSecond(accepted - previous.accepted),
      deliveredPerSecond: perSecond(delivered - previous.delivered),
      loadAverage: Math.round(loadavg()[0]! * 10) / 10,
      ...probed,
      hostCpuPercentOfOneCore: cpuMs === null ? null : Math.round(cpuMs / elapsedSeconds / 10),
      hostCpuMsPerEvent:
        cpuMs === null || accepted === previous.accepted
          ? null
          : Math.round((cpuMs / (accepted - previous.accepted)) * 10) / 10,
    };
    previous = { at: now, accepted, delivered };
    samples.push(entry);
    process.stdout.write(`${JSON.stringify(entry)}\n`);
  };
  await sample();

  // A steady rate: each tick sends what is due since the start, so slow answers do not lower it.
  let sent = 0;
  const tokenRefresh = setInterval(() => void token('dev-publisher').then((fresh) => (publisher = fresh)), 240_000);
  const ticker = setInterval(() => {
    const due = Math.floor(((Date.now() - started) / 1000) * rate);
    while (sent < due) {
      sent += 1;
      void publishOne();
    }
  }, 20);
  const sampler = setInterval(() => void sample(), sampleEveryMs);
  const snapshots = snapshotAt.map((seconds) =>
    setTimeout(() => {
      process.stdout.write(`heap snapshot at ${seconds} s into ${snapshotDir}\n`);
      host.kill('SIGUSR2');
    }, seconds * 1000),
  );
  await new Promise((resolve) => setTimeout(resolve, durationSeconds * 1000));
  clearInterval(ticker);
  clearInterval(sampler);
  clearInterval(tokenRefresh);
  snapshots.forEach(clearTimeout);

  const drainDeadline = Date.now() + 120_000;
  while (delivered < accepted && Date.now() < drainDeadline) await new Promise((resolve) => setTimeout(resolve, 200));
  await sample();

  host.kill('SIGINT');
  const exitCode = await new Promise<number | null>((resolve) => host.once('exit', (code) => resolve(code)));
  await receiver.close();
  await rm(cwd, { recursive: true, force: true });

  // V8 grows and shrinks its heap in a sawtooth, so single samples say little: growth compares the
  // mean of the first and the second half of the samples after warm-up (the last sample, taken
  // after the drain, is left out). The goal is judged on the RSS after a full collection (see
  // bench/support/memory-probe.ts), the momentary RSS's growth is reported beside it.
  const warm = samples.find((entry) => entry.atSeconds >= warmupSeconds) ?? samples[0]!;
  const steady = samples.slice(samples.indexOf(warm), -1);
  const growthOf = (pick: (entry: Sample) => number | null) => {
    const mean = (values: readonly Sample[]) => {
      const known = values.map(pick).filter((value): value is number => value !== null);
      return known.reduce((sum, value) => sum + value, 0) / Math.max(1, known.length);
    };
    const first = mean(steady.slice(0, Math.ceil(steady.length / 2)));
    const second = mean(steady.slice(Math.ceil(steady.length / 2)));
    return { first, second, growth: first > 0 ? (second - first) / first : Number.NaN };
  };
  const momentary = growthOf((entry) => entry.rssMb);
  const settled = growthOf((entry) => entry.settledRssMb);
  const liveHeap = growthOf((entry) => entry.settledHeapUsedMb);
  const settledKnown = steady.some((entry) => entry.settledRssMb !== null);
  const growth = settledKnown ? settled.growth : momentary.growth;
  const firstHalf = momentary.first;
  const secondHalf = momentary.second;
  const known = (values: readonly (number | null)[]) => values.filter((value): value is number => value !== null);
  const round = (value: number) => Math.round(value * 10) / 10;
  const last = samples.at(-1)!;
  const serverErrors = Object.entries(refused)
    .filter(([status]) => Number(status) >= 500)
    .reduce((sum, [, count]) => sum + count, 0);
  const steadySeconds = Math.max(1, (steady.at(-1)?.atSeconds ?? 0) - warm.atSeconds);
  const result = {
    when: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    durationSeconds,
    ratePerSecond: rate,
    ttlSeconds: TTL_SECONDS,
    warmupSeconds: warm.atSeconds,
    sampleEverySeconds: sampleEveryMs / 1000,
    published: sent,
    accepted,
    refusedByStatus: refused,
    connectionErrors: failed,
    delivered,
    allDelivered: delivered >= accepted && accepted > 0,
    serverErrors,
    goalNoServerErrors: serverErrors === 0 && failed === 0,
    throughputPerSecondAfterWarmup: {
      accepted: round(((steady.at(-1)?.accepted ?? 0) - warm.accepted) / steadySeconds),
      delivered: round(((steady.at(-1)?.delivered ?? 0) - warm.delivered) / steadySeconds),
    },
    rssMb: {
      atWarmup: warm.rssMb,
      minAfterWarmup: Math.min(...steady.map((entry) => entry.rssMb)),
      maxAfterWarmup: Math.max(...steady.map((entry) => entry.rssMb)),
      meanFirstHalfAfterWarmup: round(firstHalf),
      meanSecondHalfAfterWarmup: round(secondHalf),
      end: last.rssMb,
    },
    rssGrowthAfterWarmupPercent: round(momentary.growth * 100),
    settledRssMb: {
      atWarmup: warm.settledRssMb,
      minAfterWarmup: Math.min(...known(steady.map((entry) => entry.settledRssMb))),
      maxAfterWarmup: Math.max(...known(steady.map((entry) => entry.settledRssMb))),
      meanFirstHalfAfterWarmup: round(settled.first),
      meanSecondHalfAfterWarmup: round(settled.second),
    },
    settledRssGrowthAfterWarmupPercent: round(settled.growth * 100),
    settledHeapUsedMb: {
      meanFirstHalfAfterWarmup: round(liveHeap.first),
      meanSecondHalfAfterWarmup: round(liveHeap.second),
    },
    settledHeapUsedGrowthAfterWarmupPercent: round(liveHeap.growth * 100),
    goalJudgedOn: settledKnown ? 'settledRssMb' : 'rssMb',
    goalRssGrowthUnder10Percent: growth < 0.1,
    hostAfterWarmup: {
      cpuMsPerEventMedian: percentile(known(steady.map((entry) => entry.hostCpuMsPerEvent)), 50),
      cpuPercentOfOneCoreMedian: percentile(known(steady.map((entry) => entry.hostCpuPercentOfOneCore)), 50),
      loopDelayMaxMs: Math.max(...known(steady.map((entry) => entry.loopDelayMaxMs))),
      gcMaxPauseMs: Math.max(...known(steady.map((entry) => entry.gcMaxPauseMs))),
    },
    loadAverage: {
      min: Math.min(...samples.map((entry) => entry.loadAverage)),
      max: Math.max(...samples.map((entry) => entry.loadAverage)),
    },
    latencyP99MsAfterWarmup: {
      min: Math.min(...steady.map((entry) => entry.latencyP99Ms ?? Infinity)),
      max: Math.max(...steady.map((entry) => entry.latencyP99Ms ?? 0)),
    },
    latencyP50MsAfterWarmup: {
      min: Math.min(...steady.map((entry) => entry.latencyP50Ms ?? Infinity)),
      max: Math.max(...steady.map((entry) => entry.latencyP50Ms ?? 0)),
    },
    stateDirMb: {
      atWarmup: warm.stateDirMb,
      maxAfterWarmup: Math.max(...steady.map((entry) => entry.stateDirMb)),
      end: last.stateDirMb,
    },
    hostExitCode: exitCode,
    goalMet: growth < 0.1 && serverErrors === 0 && failed === 0 && delivered >= accepted && accepted > 0,
    samples,
  };
  await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ ...result, samples: undefined })}\n`);
}

await main();
