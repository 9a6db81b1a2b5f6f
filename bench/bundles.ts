/**
 * Lambda bundles: each function of functions/config/resources.ts bundled with the esbuild options CDK uses
 * (lib/bundling.ts), its size (raw and gzip), and its cold import time — a fresh `node` per
 * measurement that times `import()` of the bundle — next to the same measurement of a bare
 * handler that holds the AWS SDK clients the function's cold start holds and does nothing,
 * bundled with the same options and imported the same way, run by run in turns with the
 * function's (issue 27: the goal is the function's cold import ≤ 1.2× that handler's; there is no
 * goal in kilobytes or milliseconds: the SDK is the baseline), and of an empty ES module. Also
 * reports any network I/O a handler starts while being imported (it must start none).
 *
 * A bundle is `index.mjs` and the chunks esbuild split off (issue 15): the cold start reads
 * index.mjs and the chunks it imports statically, which is what the size and the cold import are
 * about; the chunks reached only through `import()` are reported apart. For the contract register,
 * whose parsers are such a chunk, the time from a cold process to its first parsed document too,
 * so that the cost moved out of the cold start is stated where it is paid.
 *
 * As deployed is plain `node`: the functions run without `--enable-source-maps` (issue 15); the
 * bundle reads its source map when it formats its first stack (functions/app/source-mapped-stacks.ts).
 * The import with `--enable-source-maps` (how they ran before), and the first stack formatted
 * after a cold import with and without it, state the trade.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, version as esbuildVersion, type Metafile } from 'esbuild';
import { BUNDLE_FILE, esbuildOptions } from '../lib/bundling.js';
import { buckets, functions, keys, localName, queues, resourceEnv, tables } from '../functions/config/resources.js';
import type { BucketName, KeyName, QueueName, TableName } from '../functions/config/resources.js';
import { parseStackConfig, settingEnvironment } from '../lib/stack-config.js';
import { enrolmentContract, enrolmentPayload } from '../test/support/contract-documents.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 15;
/**
 * Issue 27: a function's median cold import at most 1.2× that of a bare handler holding the same
 * SDK clients. Issue 15's goal of 400 KB and 40 ms per cold start is dropped: the SDK clients alone
 * are most of that, so the SDK, not a number of kilobytes, is the baseline.
 */
const GOAL = { ratioToBareSdkHandler: 1.2 } as const;
/** As deployed: no node flags (lib/constructs/koerier-function.ts sets no NODE_OPTIONS). */
const DEPLOYED_FLAGS: readonly string[] = [];
/** How the functions ran before issue 15. */
const ENABLE_SOURCE_MAPS: readonly string[] = ['--enable-source-maps'];
const SPAWN_TIMEOUT_MS = 20_000;
/** How long the network probe waits after the import for I/O the module started without awaiting. */
const NETWORK_SETTLE_MS = 300;

/** Imports the module named by argv[2], prints the import time, waits argv[3] ms, exits. */
const IMPORT_TIMER = `
const started = performance.now();
await import(process.argv[2]);
const importMs = performance.now() - started;
await new Promise((resolve) => setTimeout(resolve, Number(process.argv[3] ?? 0)));
process.stdout.write(JSON.stringify({ importMs }));
process.exit(0);
`;

/** Preloaded with --import for the network probe: records every connection and DNS lookup begun. */
const NETWORK_PROBE = `
import dns from 'node:dns';
import net from 'node:net';
const attempts = [];
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  // net.connect passes its already-normalised [options, callback] as the first argument.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const target = typeof first === 'object' && first !== null ? first : { port: first, host: args[1] };
  attempts.push('connect ' + (target.path ?? (target.host ?? 'localhost') + ':' + target.port));
  return connect.apply(this, args);
};
for (const [owner, name] of [[dns, 'lookup'], [dns, 'resolve'], [dns.promises, 'lookup'], [dns.promises, 'resolve']]) {
  const original = owner[name];
  owner[name] = function (host, ...rest) {
    attempts.push('dns ' + name + ' ' + host);
    return original.call(this, host, ...rest);
  };
}
const fetch = globalThis.fetch;
globalThis.fetch = function (input, init) {
  attempts.push('fetch ' + String(input instanceof Request ? input.url : input));
  return fetch(input, init);
};
process.on('exit', () => process.stderr.write('NETWORK ' + JSON.stringify(attempts) + '\\n'));
`;

/**
 * Imports the bundle named by argv[2] and calls its handler twice with no event: the event adapter
 * throws in the bundle (functions/handlers/shared/). Every stack formatted is timed, whichever
 * error asks first (the handler may log one itself): the first is the map's read, parse and
 * decoding, the second what later ones cost. Fails if the stack was not mapped to the sources.
 */
const FIRST_STACK_TIMER = `
const url = process.argv[2];
const { handler } = await import(url);
const format = Error.prepareStackTrace;
const times = [];
Error.prepareStackTrace = (error, trace) => {
  const started = performance.now();
  try {
    return format(error, trace);
  } finally {
    times.push(performance.now() - started);
  }
};
let stack;
for (let i = 0; i < 2; i++) {
  try {
    await handler(undefined, {});
  } catch (error) {
    const text = error.stack;
    stack ??= text;
  }
}
if (stack === undefined) throw new Error('the handler took no event without throwing');
if (stack.includes(url)) throw new Error('the stack was not mapped to the sources: ' + stack);
if (times.length < 2) throw new Error('expected two stacks formatted, not ' + times.length);
process.stdout.write('\\nSTACK TIMES ' + JSON.stringify({ firstStackMs: times[0], secondStackMs: times[1] }) + '\\n');
process.exit(0);
`;

/**
 * The contract register's first document after a cold start: imports the bundle (argv[2]), then
 * its parsers' chunk (argv[3]) and parses a document, as the register's `parsersOnFirstUse` does
 * (functions/app/contracts-app.ts) — the same chunk URL, so the same module Node loads for it —
 * then a second document, which pays the parse alone.
 */
const FIRST_DOCUMENT_TIMER = `
const document = process.argv[4];
const started = performance.now();
await import(process.argv[2]);
const imported = performance.now();
const { contractParser } = await import(process.argv[3]);
const parser = contractParser();
const loaded = performance.now();
const first = await parser.parse('asyncapi-data', document, 'json');
const parsed = performance.now();
if (!first.valid) throw new Error('the document was refused: ' + JSON.stringify(first));
await parser.parse('asyncapi-data', document, 'json');
const second = performance.now() - parsed;
process.stdout.write(JSON.stringify({ importMs: imported - started, parsersChunkMs: loaded - imported, firstParseMs: parsed - loaded, totalMs: parsed - started, secondParseMs: second }));
process.exit(0);
`;

/** The chunk the contract register loads on its first document. */
const PARSERS_CHUNK = /^contract-parsers-\w+\.mjs$/;

interface Timing {
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
}

/** The environment a deployed function sees: the settings from cdk.json, every resource name as a placeholder. */
async function functionEnvironment(): Promise<Record<string, string>> {
  const cdkJson = JSON.parse(await readFile(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  const region = 'eu-central-1';
  // What a deployer passes with -c (cdk.json leaves the deployment's own identity open).
  const example = {
    'koerier:issuer': 'https://login.example.org/realms/koerier',
    'koerier:audience': 'koerier',
    'koerier:jwksUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
    'koerier:webhookOrigin': 'koerier.example.org',
    'koerier:allowedOrigins': ['events.partner.example.org'],
    'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
  };
  const env: Record<string, string> = {
    ...settingEnvironment(
      parseStackConfig({ ...example, ...cdkJson.context }),
      `https://abcdef1234.execute-api.${region}.amazonaws.com`,
    ),
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
  };
  for (const name of Object.keys(tables) as TableName[]) env[resourceEnv.table(name)] = localName.table(name);
  for (const name of Object.keys(queues) as QueueName[]) {
    env[resourceEnv.queueUrl(name)] = `https://sqs.${region}.amazonaws.com/123456789012/${localName.queue(name)}`;
    env[resourceEnv.deadLetterQueueUrl(name)] =
      `https://sqs.${region}.amazonaws.com/123456789012/${localName.deadLetterQueue(name)}`;
  }
  for (const name of Object.keys(buckets) as BucketName[]) env[resourceEnv.bucket(name)] = localName.bucket(name);
  for (const name of Object.keys(keys) as KeyName[]) {
    env[resourceEnv.key(name)] = `arn:aws:kms:${region}:123456789012:key/00000000-0000-4000-8000-000000000000`;
  }
  return env;
}

function runNode(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, timeout: SPAWN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) reject(new Error(`node ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * Cold import time of one module as deployed and with `--enable-source-maps`, and of its bare SDK
 * handler as deployed (when given), each run in a fresh process, the three alternating so that a
 * change of load on the shared machine weighs on all alike.
 */
async function coldImports(
  timer: string,
  module: string,
  env: Record<string, string>,
  bareSdkHandler?: string,
): Promise<{ asDeployed: Timing; withEnableSourceMaps: Timing; bareSdkHandlerAsDeployed?: Timing }> {
  const times = {
    asDeployed: [] as number[],
    withEnableSourceMaps: [] as number[],
    bareSdkHandlerAsDeployed: [] as number[],
  };
  const measured = [
    ['asDeployed', DEPLOYED_FLAGS, module],
    ['withEnableSourceMaps', ENABLE_SOURCE_MAPS, module],
    ...(bareSdkHandler === undefined ? [] : [['bareSdkHandlerAsDeployed', DEPLOYED_FLAGS, bareSdkHandler] as const]),
  ] as const;
  for (let i = 0; i < RUNS; i++) {
    for (const [name, flags, file] of measured) {
      const { stdout } = await runNode([...flags, timer, pathToFileURL(file).href, '0'], env);
      times[name].push((JSON.parse(stdout) as { importMs: number }).importMs);
    }
  }
  return {
    asDeployed: summary(times.asDeployed),
    withEnableSourceMaps: summary(times.withEnableSourceMaps),
    ...(bareSdkHandler === undefined ? {} : { bareSdkHandlerAsDeployed: summary(times.bareSdkHandlerAsDeployed) }),
  };
}

/** The AWS SDK client packages (`@aws-sdk/client-*`) whose code is in these output files. */
function sdkClientsIn(outputs: readonly Output[]): string[] {
  const clients = new Set<string>();
  for (const [, output] of outputs) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
      const client = /node_modules\/(@aws-sdk\/client-[^/]+)\//.exec(file)?.[1];
      if (client !== undefined && bytesInOutput > 0) clients.add(client);
    }
  }
  return [...clients].sort();
}

/** The class each SDK client package exports, by package. */
const SDK_CLIENT_CLASSES: Readonly<Record<string, string>> = {
  '@aws-sdk/client-dynamodb': 'DynamoDBClient',
  '@aws-sdk/client-kms': 'KMSClient',
  '@aws-sdk/client-s3': 'S3Client',
  '@aws-sdk/client-sqs': 'SQSClient',
};

/**
 * The bare SDK handler's source: it imports each client class and keeps it (an export, so esbuild
 * does not shake it out), makes no client at import — Koerier's functions make theirs on the first
 * invocation (functions/composition/lambda-dependencies.ts) — and its handler does nothing.
 */
export function bareSdkHandlerSource(clients: readonly string[]): string {
  const names = clients.map((client) => {
    const name = SDK_CLIENT_CLASSES[client];
    if (name === undefined) throw new Error(`bench/bundles.ts knows no client class of ${client}`);
    return [client, name] as const;
  });
  return [
    '// A Lambda handler that holds the AWS SDK clients a function holds and does nothing (issue 27).',
    ...names.map(([client, name]) => `import { ${name} } from '${client}';`),
    `export const clients = [${names.map(([, name]) => name).join(', ')}];`,
    'export const handler = async () => {};',
    '',
  ].join('\n');
}

/**
 * Builds the bare SDK handler of `clients` with the functions' esbuild options into `outdir`. Its
 * entry lives in the scratch directory, so the repository's node_modules are named for resolving
 * the SDK's packages (`nodePaths`: where packages are looked up, not what goes into the bundle).
 */
async function buildBareSdkHandler(
  clients: readonly string[],
  outdir: string,
): Promise<{ file: string; coldStart: Output[]; clients: string[] }> {
  const entry = path.join(outdir, 'bare-sdk-handler.mjs');
  await mkdir(outdir, { recursive: true });
  await writeFile(entry, bareSdkHandlerSource(clients));
  const { metafile } = await build({
    ...esbuildOptions(entry, path.join(outdir, 'out')),
    nodePaths: [path.join(REPO_ROOT, 'node_modules')],
    metafile: true,
  });
  const { coldStart } = byLoading(metafile);
  const held = sdkClientsIn(coldStart);
  if (held.join() !== [...clients].sort().join())
    throw new Error(`the bare SDK handler holds ${held.join(', ')}, not ${clients.join(', ')}`);
  return { file: path.join(outdir, 'out', BUNDLE_FILE), coldStart, clients: held };
}

/** The first and the second formatted stack after a cold import, each run in a fresh process. */
async function stackFormatting(
  timer: string,
  module: string,
  flags: readonly string[],
  env: Record<string, string>,
): Promise<{ first: Timing; second: Timing }> {
  const first: number[] = [];
  const second: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { stdout } = await runNode([...flags, timer, pathToFileURL(module).href], env);
    // The handler may log the error on stdout before the times.
    const line = stdout.split('\n').find((l) => l.startsWith('STACK TIMES '));
    if (line === undefined) throw new Error(`the stack timer reported nothing for ${module}: ${stdout}`);
    const times = JSON.parse(line.slice('STACK TIMES '.length)) as { firstStackMs: number; secondStackMs: number };
    first.push(times.firstStackMs);
    second.push(times.secondStackMs);
  }
  return { first: summary(first), second: summary(second) };
}

function summary(times: number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    medianMs: round(sorted[Math.floor(sorted.length / 2)]!),
    minMs: round(sorted[0]!),
    maxMs: round(sorted[sorted.length - 1]!),
  };
}

async function networkAtImport(
  timer: string,
  probe: string,
  module: string,
  env: Record<string, string>,
): Promise<string[]> {
  const { stderr } = await runNode(
    ['--import', pathToFileURL(probe).href, timer, pathToFileURL(module).href, String(NETWORK_SETTLE_MS)],
    env,
  );
  const line = stderr.split('\n').find((l) => l.startsWith('NETWORK '));
  if (line === undefined) throw new Error(`the network probe reported nothing for ${module}`);
  return JSON.parse(line.slice('NETWORK '.length)) as string[];
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The five packages (Koerier's own code counted as one) that take most of these output files. */
function largestPackages(outputs: readonly Output[]): Record<string, number> {
  const bytes = new Map<string, number>();
  for (const [file, { bytesInOutput }] of outputs.flatMap(([, output]) => Object.entries(output.inputs))) {
    const parts = file.split('node_modules/').at(-1)!.split('/');
    const name = file.includes('node_modules/')
      ? parts[0]!.startsWith('@')
        ? `${parts[0]}/${parts[1]}`
        : parts[0]!
      : 'koerier (own code)';
    bytes.set(name, (bytes.get(name) ?? 0) + bytesInOutput);
  }
  return Object.fromEntries([...bytes].sort((a, b) => b[1] - a[1]).slice(0, 5));
}

type Output = [file: string, output: Metafile['outputs'][string]];

/**
 * The bundle's code files, as the cold start loads them: index.mjs and, transitively, the chunks
 * it imports statically; and the rest, which only an `import()` loads.
 */
function byLoading(metafile: Metafile): { coldStart: Output[]; lazy: Output[] } {
  const code = Object.entries(metafile.outputs).filter(([file]) => file.endsWith('.mjs'));
  const outputs = new Map(code);
  const coldStart = new Set<string>();
  const pending = code.filter(([file]) => path.basename(file) === BUNDLE_FILE).map(([file]) => file);
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (coldStart.has(file)) continue;
    coldStart.add(file);
    for (const { path: imported, kind } of outputs.get(file)!.imports)
      if (kind === 'import-statement' && outputs.has(imported)) pending.push(imported);
  }
  return {
    coldStart: code.filter(([file]) => coldStart.has(file)),
    lazy: code.filter(([file]) => !coldStart.has(file)),
  };
}

async function filesSize(
  dir: string,
  outputs: readonly Output[],
): Promise<{ bytes: number; gzipBytes: number; sourceMapBytes: number }> {
  let bytes = 0;
  let gzipBytes = 0;
  let sourceMapBytes = 0;
  for (const [file] of outputs) {
    const code = await readFile(path.join(dir, path.basename(file)));
    bytes += code.length;
    gzipBytes += gzipSync(code).length;
    sourceMapBytes += (await stat(path.join(dir, `${path.basename(file)}.map`))).size;
  }
  return { bytes, gzipBytes, sourceMapBytes };
}

/** Cold process to the contract register's first parsed document, each run in a fresh process. */
async function firstDocument(
  timer: string,
  index: string,
  chunk: string,
  env: Record<string, string>,
): Promise<Record<string, Timing>> {
  const document = JSON.stringify(enrolmentContract(enrolmentPayload()));
  const times: Record<string, number[]> = {};
  for (let i = 0; i < RUNS; i++) {
    const { stdout } = await runNode([timer, pathToFileURL(index).href, pathToFileURL(chunk).href, document], env);
    for (const [name, ms] of Object.entries(JSON.parse(stdout) as Record<string, number>))
      (times[name] ??= []).push(ms);
  }
  return Object.fromEntries(Object.entries(times).map(([name, values]) => [name, summary(values)]));
}

export async function run(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'koerier-bundles-'));
  try {
    const timer = path.join(dir, 'import-timer.mjs');
    const probe = path.join(dir, 'network-probe.mjs');
    const stackTimer = path.join(dir, 'first-stack-timer.mjs');
    const documentTimer = path.join(dir, 'first-document-timer.mjs');
    const empty = path.join(dir, 'empty.mjs');
    await writeFile(timer, IMPORT_TIMER);
    await writeFile(probe, NETWORK_PROBE);
    await writeFile(stackTimer, FIRST_STACK_TIMER);
    await writeFile(documentTimer, FIRST_DOCUMENT_TIMER);
    await writeFile(empty, 'export {};\n');
    const env = await functionEnvironment();

    // Two cores shared with other work make the medians drift; the load says how much to trust them (the minimums drift less).
    const loadAverageAtStart = os.loadavg()[0]!;
    const baseline = {
      subject: 'an empty ES module, imported the same way',
      ...(await coldImports(timer, empty, env)),
    };

    const results: Record<string, unknown> = {};
    const networkFindings: string[] = [];
    for (const [name, spec] of Object.entries(functions)) {
      const outdir = path.join(dir, name);
      const outfile = path.join(outdir, BUNDLE_FILE);
      // The metafile only describes the build; the files are byte for byte what CDK deploys.
      const { metafile } = await build({ ...esbuildOptions(path.join(REPO_ROOT, spec.entry), outdir), metafile: true });
      const { coldStart, lazy } = byLoading(metafile);
      const coldStartSize = await filesSize(outdir, coldStart);
      const sdkClients = {
        atColdStart: sdkClientsIn(coldStart),
        onlyInLazyChunks: sdkClientsIn(lazy).filter((c) => !sdkClientsIn(coldStart).includes(c)),
      };
      const bare = await buildBareSdkHandler(sdkClients.atColdStart, path.join(dir, `${name}-bare-sdk-handler`));
      const bareSize = await filesSize(path.join(dir, `${name}-bare-sdk-handler`, 'out'), bare.coldStart);
      const { asDeployed, withEnableSourceMaps, bareSdkHandlerAsDeployed } = await coldImports(
        timer,
        outfile,
        env,
        bare.file,
      );
      const ratioToBareSdkHandler = round(asDeployed.medianMs / bareSdkHandlerAsDeployed!.medianMs);
      const stacks = await stackFormatting(stackTimer, outfile, DEPLOYED_FLAGS, env);
      const stacksWithEnableSourceMaps = await stackFormatting(stackTimer, outfile, ENABLE_SOURCE_MAPS, env);
      const network = await networkAtImport(timer, probe, outfile, env);
      networkFindings.push(...network.map((attempt) => `${name}: ${attempt}`));
      const parsersChunk = lazy.map(([file]) => path.basename(file)).find((file) => PARSERS_CHUNK.test(file));
      results[name] = {
        entry: spec.entry,
        coldStart: { files: coldStart.map(([file]) => path.basename(file)), ...coldStartSize },
        lazyChunks: {
          bytes: lazy.reduce((sum, [, output]) => sum + output.bytes, 0),
          files: Object.fromEntries(lazy.map(([file, output]) => [path.basename(file), output.bytes])),
        },
        sdkClients,
        bareSdkHandler: {
          clients: bare.clients,
          coldStart: { files: bare.coldStart.map(([file]) => path.basename(file)), ...bareSize },
          coldImportAsDeployed: bareSdkHandlerAsDeployed,
        },
        ratioToBareSdkHandler,
        meetsGoal: ratioToBareSdkHandler <= GOAL.ratioToBareSdkHandler,
        coldImportAsDeployed: asDeployed,
        coldImportWithEnableSourceMaps: withEnableSourceMaps,
        firstStackAsDeployed: stacks.first,
        secondStackAsDeployed: stacks.second,
        firstStackWithEnableSourceMaps: stacksWithEnableSourceMaps.first,
        ratioToBaseline: round(asDeployed.medianMs / baseline.asDeployed.medianMs),
        largestPackagesAtColdStart: largestPackages(coldStart),
        ...(lazy.length > 0 ? { largestPackagesLoadedLazily: largestPackages(lazy) } : {}),
        ...(parsersChunk === undefined
          ? {}
          : { firstDocument: await firstDocument(documentTimer, outfile, path.join(outdir, parsersChunk), env) }),
        networkAtImport: network,
      };
    }

    return {
      description:
        'Lambda bundles as CDK builds them: size and gzip size of what a cold start imports (index.mjs and its static chunks) and of the chunks only import() loads, cold import time as deployed and with --enable-source-maps (median of fresh node processes) next to a bare handler holding the same AWS SDK clients (bundled and imported the same way, in turns with the function) and an empty ES module, the time to format the first stack after a cold import, and for the contract register the time from a cold process to its first parsed document (import, parsers chunk, first parse)',
      goal: {
        ...GOAL,
        about:
          'issue 27: each function’s median cold import as deployed ≤ 1.2× that of its bare SDK handler (ratioToBareSdkHandler, meetsGoal per function). No goal in kilobytes or milliseconds: issue 15’s 400 KB and 40 ms per cold start are dropped, the SDK is the baseline.',
      },
      node: process.version,
      note: "Measured on this machine's Node; Lambda runs nodejs24.x on arm64, so absolute times differ there — compare the ratios.",
      esbuild: esbuildVersion,
      runsPerMeasurement: RUNS,
      loadAverage: { atStart: round(loadAverageAtStart), atEnd: round(os.loadavg()[0]!) },
      baseline,
      functions: results,
      networkAtImport: networkFindings.length === 0 ? 'none' : networkFindings,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await run(), null, 2));
}
