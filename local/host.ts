/**
 * The laptop host: Koerier's Lambda handlers, unchanged, behind an API Gateway emulation and SQS
 * event-source pollers, against in-process AWS emulators, with a development OAuth2 server.
 *
 * The host builds its own configuration from its settings (`loadConfig(environment)`, never
 * process.env) and its own dependencies (functions/composition/aws-dependencies.ts) with SDK
 * clients pointed at its emulators, and hands them to every function's `handlerFor`. Nothing is
 * shared between hosts, so several hosts run side by side in one process.
 */
import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { KoerierDependencies } from '../functions/app/dependencies.js';
import { createDynamoDbClient, createS3Client, createSqsClient } from '../functions/aws/clients.js';
import { provisionPullQueues } from '../functions/aws/pull-queue-provisioning.js';
import { SqsPullQueues } from '../functions/aws/sqs-pull-queues.js';
import { buildAwsDependencies, type AwsClients } from '../functions/composition/aws-dependencies.js';
import { accessTokenRules, loadConfig, settingEnv, type KoerierConfig } from '../functions/config.js';
import { API_BASE_PATH, functions, resourceEnv, type FunctionName } from '../functions/config/resources.js';
import { publicRootOf } from '../functions/config/public-base-url.js';
import { createApiGateway } from './api-gateway.js';
import { createDevIdentity } from './dev-identity.js';
import { startEmulators, type Emulators } from './emulators.js';
import { createHealthCheck } from './health.js';
import { prometheusMetrics } from './prometheus-metrics.js';
import { consolePath, consoleRoutes } from './console-assets.js';
import { createDevSignIn, newSignInCode } from './dev-sign-in.js';
import { invokeWithTimeout, loadFunctions } from './lambda-runtime.js';
import { ALL_SCOPES, loadOrCreateLocalConfig, type LocalConfig } from './local-config-file.js';
import { DEFAULT_LOCAL_SIGNING_KEYS, ensureLocalKeyFiles, ensureLocalSigningKeys } from './local-keys.js';
import { startPoller, type Poller } from './event-source-poller.js';
import { LOCK_FILE, lockStateDirectory } from './state-lock.js';

/** The console's sign-in code of the running host, for the user alone. */
const SIGN_IN_CODE_FILE = 'console-sign-in-code';

/** Audience of the development tokens, and what the handlers expect. */
export const LOCAL_AUDIENCE = 'koerier';

export interface KoerierHostOptions {
  /** 0 picks a free port. Default 3000. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /**
   * DynamoDB tables, S3 objects, queued SQS messages, the signing key and the local key files
   * live here. Private to the user (0700, files 0600); one running host per directory.
   */
  readonly stateDir: string;
  /** Default `<cwd>/koerier.local.json`; created when absent. */
  readonly configFile?: string;
  /** Wipe `stateDir` before starting (the config file is kept). */
  readonly fresh?: boolean;
  /**
   * Extra or overriding settings for the functions (names from functions/config.ts `settingEnv`),
   * e.g. short retry schedules in tests. The host never reads process.env: `npm start` passes the
   * KOERIER_* variables of its shell here.
   */
  readonly settings?: Readonly<Record<string, string>>;
  /** One JSON line per request, batch and failure. Default: stdout. */
  readonly log?: (line: string) => void;
  /**
   * Which queue-triggered functions get their SQS poller: all (default), none (`false`), or the
   * named ones. Tests that inspect a queue, or run a consumer in another process, turn some off.
   */
  readonly queueTriggers?: boolean | readonly string[];
  /** Whether scheduled functions (the lane sweeper) run on their timers; default true. */
  readonly schedules?: boolean;
  /**
   * Runs around every invocation of a function (HTTP or queue-triggered): the cost benchmark
   * (bench/cost.ts) attributes AWS requests to the function that sent them and times each handler.
   */
  readonly aroundInvocation?: (
    functionName: string,
    event: unknown,
    invoke: () => Promise<unknown>,
  ) => Promise<unknown>;
  /**
   * Seconds each queue-triggered function's poller gathers messages before invoking it, by
   * function name. Default 0 for every function: the laptop is for trying things, so an event
   * reaches its webhook within tens of milliseconds. A deployment gathers for the router's 1 s
   * (`koerier:batchingWindowSeconds`, docs/DEPLOYING.md); pass `{ router: 1 }` to see its batches.
   */
  readonly batchingWindowSeconds?: Readonly<Record<string, number>>;
  /** The most messages a poller gives one invocation, by function name (`koerier:batchSizes`); default: functions/config/resources.ts's. */
  readonly batchSizes?: Readonly<Record<string, number>>;
  /**
   * The KMS client the functions send with where a key setting names a KMS key instead of a laptop
   * key file (`KOERIER_KEY_*`, `KOERIER_SIGNING_KEYS`): the same adapters as in AWS. Default: one
   * of the SDK's own resolution. The e2e test of KMS keys (test/e2e/kms-keys.test.ts) points it at
   * a stand-in KMS and watches what each function asks of it.
   */
  readonly kms?: () => KMSClient;
  /**
   * Each function on adapters and SDK clients of its own, as each Lambda function runs in
   * containers of its own: nothing one function keeps (the partner directory, a pull queue's URL,
   * the lock-token key) spares another the AWS calls it would make in AWS, where the permissions
   * record must see them (test/e2e/kms-keys.test.ts). Default: one set for all functions
   * (`dependencies`, `awsClients`), which tests and benchmarks look through.
   */
  readonly functionContainers?: boolean;
}

export interface KoerierHost {
  /** `http://<host>:<port>`, the origin: the token issuer, `/oauth/token`, `/.well-known/…` and `/health` are here. */
  readonly url: string;
  /** The API's base URL, `<url>/v1` (API_BASE_PATH): KOERIER_PUBLIC_BASE_URL, and what clients call. */
  readonly apiUrl: string;
  readonly port: number;
  readonly emulators: Emulators;
  readonly configFile: string;
  /** True when this start wrote a new `koerier.local.json`. */
  readonly configCreated: boolean;
  readonly localConfig: LocalConfig;
  /** What the console's sign-in asks for (local/dev-sign-in.ts): new at every start, printed by `npm start`. */
  readonly signInCode: string;
  /** Where the sign-in code is kept for the user alone (0600): `<stateDir>/console-sign-in-code`. */
  readonly signInCodeFile: string;
  /** Mints a development access token directly. Scopes default to the client's (or every scope for an unknown client). */
  issueToken(clientId: string, scopes?: readonly string[]): Promise<string>;
  /**
   * The settings the functions' configuration was loaded from: the emulators' AWS and resource
   * variables, the host's own and `settings` on top. For a process that runs a function of this
   * host beside it (it may load them into its own environment).
   */
  readonly environment: Readonly<Record<string, string>>;
  /** The configuration every function of this host runs with. */
  readonly config: KoerierConfig;
  /** What the functions of this host run on; `awsClients` are its SDK clients (one per service). */
  readonly dependencies: KoerierDependencies;
  readonly awsClients: LaptopAwsClients;
  /** The clients each function sends with, by function name: `awsClients` for all, unless `functionContainers`. */
  readonly functionAwsClients: ReadonlyMap<string, LaptopAwsClients>;
  /** Stops the pollers, the server and the emulators. */
  stop(): Promise<void>;
}

/**
 * The host's clients of its emulators: the SDK clients the functions send with, made by the same
 * constructors as in Lambda (functions/aws/clients.ts), so tests and benchmarks that watch or look
 * through them see what the functions do. The emulators' own chores (tables, the TTL sweep, the
 * health check) have clients of their own.
 */
export type LaptopAwsClients = AwsClients;

/**
 * The Koerier settings (`KOERIER_*`) of an environment record, for a program that starts a host
 * and wants its shell's settings to apply (`npm start`); the host itself reads no environment.
 */
export function settingsFromEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('KOERIER_') && entry[1] !== undefined,
    ),
  );
}

/** The laptop's batching window when the caller names none (see `batchingWindowSeconds`). */
export const LAPTOP_BATCHING_WINDOW_SECONDS = 0;
/**
 * Batches of one queue a function runs at once on the laptop. Lambda's event source mapping
 * starts with five concurrent batches for a standard queue and scales up from there; with one,
 * the laptop queued every event behind the router's previous invocation (issue 15, item 3).
 */
export const LAPTOP_BATCHES_IN_FLIGHT = 5;
/**
 * The alerts function gathers for a window on the laptop too (issue 30 item 3): alerts are not
 * in a hurry, and a digest of alerts that fire together needs them in one batch.
 */
export const LAPTOP_ALERT_BATCHING_WINDOW_SECONDS = 5;
/** Where the laptop writes alert e-mail (.eml files), inside the state directory. */
export const ALERT_MAIL_FOLDER = 'alert-mail';

export async function startKoerierHost(options: KoerierHostOptions): Promise<KoerierHost> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const stateDir = resolve(options.stateDir);
  const configFile = resolve(options.configFile ?? join(process.cwd(), 'koerier.local.json'));
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };

  try {
    // The state holds sink credentials, signing and encryption keys: nobody else may read it.
    // The umask covers every file the emulators create later (LevelDB tables, S3 objects, journals).
    process.umask(0o077);
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    // Taken before --fresh wipes anything: a running host's state is never pulled from under it.
    const lock = lockStateDirectory(stateDir);
    cleanups.push(() => lock.release());
    if (options.fresh) {
      for (const entry of await readdir(stateDir)) {
        if (entry !== LOCK_FILE) await rm(join(stateDir, entry), { recursive: true, force: true });
      }
    }
    // State from before the umask (an older Koerier) is made private too.
    await makePrivate(stateDir);
    const { config: localConfig, created: configCreated } = await loadOrCreateLocalConfig(configFile);

    const emulators = await startEmulators({ stateDir, log });
    cleanups.push(() => emulators.stop());
    if (Object.keys(emulators.restoredMessages).length > 0) {
      log(
        JSON.stringify({
          level: 'info',
          time: new Date().toISOString(),
          message: 'queued messages restored from the state directory',
          queues: emulators.restoredMessages,
        }),
      );
    }

    const madeClients: LaptopAwsClients[] = [];
    const newClients = (): LaptopAwsClients => {
      const made = {
        dynamodb: createDynamoDbClient(emulators.clientSettings('dynamodb')),
        sqs: createSqsClient(emulators.clientSettings('sqs')),
        s3: createS3Client(emulators.clientSettings('s3')),
      };
      madeClients.push(made);
      return made;
    };
    const awsClients = newClients();
    // Registered before the server, so they are destroyed only once its requests are done.
    cleanups.push(() => {
      for (const made of madeClients) {
        made.dynamodb.destroy();
        made.sqs.destroy();
        made.s3.destroy();
      }
    });
    const gateway = createApiGateway(log);
    await new Promise<void>((resolveListen, reject) => {
      gateway.server.once('error', reject);
      gateway.server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', () => resolveListen());
    });
    cleanups.push(() => closeServer(gateway.server));
    const address = gateway.server.address() as AddressInfo;
    const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${hostName}:${address.port}`;

    const signInCode = newSignInCode();
    const signInCodeFile = join(stateDir, SIGN_IN_CODE_FILE);
    await writeFile(signInCodeFile, `${signInCode}\n`, { mode: 0o600 });
    const signIn = createDevSignIn({ consoleUrl: `${url}${consolePath()}`, clients: localConfig.clients, signInCode });
    const identity = await createDevIdentity({
      signIn,
      stateDir,
      issuer: url,
      audience: LOCAL_AUDIENCE,
      clients: localConfig.clients,
      // The functions will run with these settings; the development tokens must pass them.
      tokenRules: accessTokenRules({ ...options.settings }),
    });
    const environment: Record<string, string> = {
      ...emulators.awsEnvironment,
      ...emulators.resourceEnvironment,
      ...(await ensureLocalKeyFiles(stateDir)),
      [settingEnv.issuer]: url,
      [settingEnv.audience]: LOCAL_AUDIENCE,
      [settingEnv.jwksUrl]: `${url}/.well-known/jwks.json`,
      // Published in the API description: on the public host when the host is reached through one.
      [settingEnv.tokenUrl]: `${publicRootOf(options.settings?.[settingEnv.publicBaseUrl]) ?? url}/oauth/token`,
      [settingEnv.allowedOrigins]: '*',
      [settingEnv.webhookOrigin]: 'koerier.local',
      [settingEnv.allowLoopbackSinks]: 'true',
      // Links name this host, unless the shell's KOERIER_PUBLIC_BASE_URL (in `settings`) names the one partners reach it by.
      [settingEnv.publicBaseUrl]: `${url}${API_BASE_PATH}`,
      [settingEnv.entitlements]: JSON.stringify(localConfig.entitlements),
      [settingEnv.publishers]: JSON.stringify(localConfig.publishers),
      [settingEnv.validationAgreedClients]: localConfig.validationAgreedClients.join(','),
      ...(localConfig.validationHandshake ? { [settingEnv.validationHandshake]: localConfig.validationHandshake } : {}),
      [settingEnv.signingKeys]: DEFAULT_LOCAL_SIGNING_KEYS,
      [settingEnv.alertMailDir]: join(stateDir, ALERT_MAIL_FOLDER),
      ...options.settings,
    };
    await ensureLocalSigningKeys(stateDir, environment[settingEnv.signingKeys]);
    const config = loadConfig(environment);
    // The same figures the functions write as EMF records in AWS, served at GET /metrics.
    const metrics = prometheusMetrics(config.stackName);
    const dependenciesOn = (clients: LaptopAwsClients) =>
      buildAwsDependencies({ config, clients: () => clients, metrics, ...(options.kms ? { kms: options.kms } : {}) });
    const dependencies = dependenciesOn(awsClients);
    // The emulator makes only the queues of functions/config/resources.ts on start; the pull
    // subscriptions' queues were made at run time. So they are made again here, before anything is
    // routed, as a standby makes them at take-over, and the SQS journal puts their messages back as
    // each appears (local/sqs-journal.ts).
    await provisionPullQueues(
      awsClients.dynamodb,
      new SqsPullQueues(awsClients.sqs, config.resources.pullQueuePrefix()),
      { subscriptionsTable: config.resources.table('subscriptions'), apply: true },
    );
    const functionAwsClients = new Map<string, LaptopAwsClients>();
    const functionDependencies = (name: string) => {
      const clients = options.functionContainers ? newClients() : awsClients;
      functionAwsClients.set(name, clients);
      return clients === awsClients ? dependencies : dependenciesOn(clients);
    };
    const loadedFunctions = [];
    for (const name of Object.keys(functions) as FunctionName[])
      loadedFunctions.push(...(await loadFunctions([name], functionDependencies(name))));
    const around = options.aroundInvocation;
    const loaded = loadedFunctions.map((fn) =>
      around
        ? {
            ...fn,
            handler: ((event, context) =>
              around(fn.name, event, () => fn.handler(event, context))) as typeof fn.handler,
          }
        : fn,
    );
    const health = createHealthCheck(emulators);
    cleanups.push(() => health.close());
    gateway.mount(
      loaded.filter((fn) => fn.spec.routes || fn.spec.defaultRoute),
      [
        { method: 'POST', path: '/oauth/token', handle: (request) => identity.tokenEndpoint(request) },
        {
          method: 'GET',
          path: '/.well-known/jwks.json',
          handle: async () => ({
            status: 200,
            headers: { 'content-type': 'application/json', 'cache-control': 'max-age=300' },
            body: JSON.stringify(identity.jwks),
          }),
        },
        { method: 'GET', path: '/health', handle: () => health.check() },
        { method: 'GET', path: '/metrics', handle: async () => metrics.answer() },
        { method: 'GET', path: '/oauth/authorize', handle: async (request) => signIn.authorizePage(request) },
        { method: 'POST', path: '/oauth/authorize', handle: async (request) => signIn.authorize(request) },
        ...consoleRoutes(url),
      ],
    );

    // Its own client: the pollers' receives and deletes are not the functions' requests.
    const pollerSqs = createSqsClient(emulators.clientSettings('sqs'));
    cleanups.push(() => pollerSqs.destroy());
    const pollers: Poller[] = [];
    cleanups.push(async () => {
      await Promise.all(pollers.map((poller) => poller.stop()));
    });
    for (const fn of loaded) {
      const trigger = fn.spec.queueTrigger;
      if (!trigger || !pollerWanted(options.queueTriggers, fn.name)) continue;
      const queueUrl = environment[resourceEnv.queueUrl(trigger.queue)] ?? '';
      const queueName = queueUrl.split('/').at(-1);
      pollers.push(
        await startPoller({
          queueUrl,
          handler: fn.handler,
          functionName: fn.name,
          batchSize: options.batchSizes?.[fn.name] ?? trigger.batchSize,
          maxBatchingWindowSeconds:
            options.batchingWindowSeconds?.[fn.name] ??
            (fn.name === 'alerts' ? LAPTOP_ALERT_BATCHING_WINDOW_SECONDS : LAPTOP_BATCHING_WINDOW_SECONDS),
          batchesInFlight: LAPTOP_BATCHES_IN_FLIGHT,
          onArrival: (listener) => emulators.onSqsArrival((arrivedIn) => arrivedIn === queueName && listener()),
          client: pollerSqs,
          timeoutSeconds: fn.spec.timeoutSeconds,
          memoryMb: fn.spec.memoryMb,
          log,
        }),
      );
    }

    // Scheduled functions (an EventBridge rule on AWS: lib/constructs/koerier-function.ts) on a timer,
    // one run at a time; a run that fails is logged and the next one comes as on AWS.
    for (const fn of loaded) {
      const schedule = fn.spec.schedule;
      if (!schedule || options.schedules === false) continue;
      let running = false;
      const timer = setInterval(() => {
        if (running) return;
        running = true;
        invokeWithTimeout(fn, { source: 'aws.events', 'detail-type': 'Scheduled Event' })
          .catch((error: unknown) =>
            log(
              JSON.stringify({
                level: 'error',
                message: 'scheduled run failed',
                function: fn.name,
                error: String(error),
              }),
            ),
          )
          .finally(() => (running = false));
      }, schedule.everyMinutes * 60_000);
      timer.unref();
      cleanups.push(() => clearInterval(timer));
    }

    let stopped: Promise<void> | undefined;
    return {
      url,
      apiUrl: `${url}${API_BASE_PATH}`,
      port: address.port,
      emulators,
      configFile,
      configCreated,
      localConfig,
      signInCode,
      signInCodeFile,
      environment,
      config,
      dependencies,
      awsClients,
      functionAwsClients,
      issueToken: (clientId, scopes) =>
        identity.issueToken(clientId, scopes ?? localConfig.clients[clientId]?.scopes ?? ALL_SCOPES),
      stop: () => (stopped ??= cleanUp()),
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** 0700 for the directory and every directory in it, 0600 for every file. */
async function makePrivate(directory: string): Promise<void> {
  await chmod(directory, 0o700);
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) await makePrivate(path);
    else if (entry.isFile()) await chmod(path, 0o600);
  }
}

function pollerWanted(queueTriggers: KoerierHostOptions['queueTriggers'], functionName: string): boolean {
  if (queueTriggers === undefined || queueTriggers === true) return true;
  if (queueTriggers === false) return false;
  return queueTriggers.includes(functionName);
}

/** Waits for requests in flight (at most a few seconds), then cuts the remaining connections. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    const force = setTimeout(() => server.closeAllConnections(), 3000);
    server.close(() => {
      clearTimeout(force);
      resolveClose();
    });
    server.closeIdleConnections();
  });
}
