/**
 * The laptop host: Koerier's Lambda handlers, unchanged, behind an API Gateway emulation and SQS
 * event-source pollers, against in-process AWS emulators, with a development OAuth2 server.
 *
 * One host per process. Handlers read their configuration once, on first use, and Node caches
 * their modules, so a second host in the same process would run handlers still configured for the
 * first one; `startKoerierHost` refuses to start while another host is running or after one ran.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { accessTokenRules, settingEnv } from '../functions/config.js';
import { resourceEnv } from '../lib/resources.js';
import { createApiGateway } from './api-gateway.js';
import { createDevIdentity } from './dev-identity.js';
import { startEmulators, type Emulators } from './emulators.js';
import { createHealthCheck } from './health.js';
import { loadFunctions } from './lambda-runtime.js';
import { ALL_SCOPES, loadOrCreateLocalConfig, type LocalConfig } from './local-config-file.js';
import { ensureLocalKeyFiles } from './local-keys.js';
import { startPoller, type Poller } from './event-source-poller.js';

/** Audience of the development tokens, and what the handlers expect. */
export const LOCAL_AUDIENCE = 'koerier';

export interface KoerierHostOptions {
  /** 0 picks a free port. Default 3000. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** DynamoDB tables, S3 objects, the signing key and the local key files live here. */
  readonly stateDir: string;
  /** Default `<cwd>/koerier.local.json`; created when absent. */
  readonly configFile?: string;
  /** Wipe `stateDir` before starting (the config file is kept). */
  readonly fresh?: boolean;
  /** Extra or overriding environment settings for the handlers, e.g. short retry schedules in tests. */
  readonly settings?: Readonly<Record<string, string>>;
  /** One JSON line per request, batch and failure. Default: stdout. */
  readonly log?: (line: string) => void;
  /**
   * Which queue-triggered functions get their SQS poller: all (default), none (`false`), or the
   * named ones. Tests that inspect a queue, or run a consumer in another process, turn some off.
   */
  readonly queueTriggers?: boolean | readonly string[];
}

export interface KoerierHost {
  /** `http://<host>:<port>`, also the token issuer and the public base URL. */
  readonly url: string;
  readonly port: number;
  readonly emulators: Emulators;
  readonly configFile: string;
  /** True when this start wrote a new `koerier.local.json`. */
  readonly configCreated: boolean;
  readonly localConfig: LocalConfig;
  /** Mints a development access token directly. Scopes default to the client's (or every scope for an unknown client). */
  issueToken(clientId: string, scopes?: readonly string[]): Promise<string>;
  /** Stops the pollers, the server and the emulators, and restores the environment. */
  stop(): Promise<void>;
}

/** Set once handler modules are imported: from then on they are configured for that host. */
let handlersLoaded = false;

export async function startKoerierHost(options: KoerierHostOptions): Promise<KoerierHost> {
  if (handlersLoaded) {
    throw new Error('a Koerier laptop host already ran in this process; handlers keep their first configuration, so start one host per process');
  }
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const stateDir = resolve(options.stateDir);
  const configFile = resolve(options.configFile ?? join(process.cwd(), 'koerier.local.json'));
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };

  try {
    if (options.fresh) await rm(stateDir, { recursive: true, force: true });
    await mkdir(stateDir, { recursive: true });
    const { config: localConfig, created: configCreated } = await loadOrCreateLocalConfig(configFile);

    const emulators = await startEmulators({ stateDir });
    cleanups.push(() => emulators.stop());

    const gateway = createApiGateway(log);
    await new Promise<void>((resolveListen, reject) => {
      gateway.server.once('error', reject);
      gateway.server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', () => resolveListen());
    });
    cleanups.push(() => closeServer(gateway.server));
    const address = gateway.server.address() as AddressInfo;
    const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${hostName}:${address.port}`;

    const identity = await createDevIdentity({
      stateDir,
      issuer: url,
      audience: LOCAL_AUDIENCE,
      clients: localConfig.clients,
      // The handlers will read these settings; the development tokens must pass them.
      tokenRules: accessTokenRules({ ...process.env, ...options.settings }),
    });
    const environment: Record<string, string> = {
      ...emulators.awsEnvironment,
      ...emulators.resourceEnvironment,
      ...(await ensureLocalKeyFiles(stateDir)),
      [settingEnv.issuer]: url,
      [settingEnv.audience]: LOCAL_AUDIENCE,
      [settingEnv.jwksUrl]: `${url}/.well-known/jwks.json`,
      [settingEnv.tokenUrl]: `${url}/oauth/token`,
      [settingEnv.allowedOrigins]: '*',
      [settingEnv.webhookOrigin]: 'koerier.local',
      [settingEnv.allowLoopbackSinks]: 'true',
      [settingEnv.publicBaseUrl]: url,
      [settingEnv.entitlements]: JSON.stringify(localConfig.entitlements),
      [settingEnv.publishers]: JSON.stringify(localConfig.publishers),
      [settingEnv.validationAgreedClients]: localConfig.validationAgreedClients.join(','),
      ...options.settings,
    };
    const restoreEnvironment = applyEnvironment(environment);
    cleanups.push(restoreEnvironment);

    // Only now may the handler modules load: they must see the environment above.
    handlersLoaded = true;
    const loaded = await loadFunctions();
    const health = createHealthCheck(emulators);
    cleanups.push(() => health.close());
    gateway.mount(
      loaded.filter((fn) => fn.spec.routes || fn.spec.defaultRoute),
      [
        { method: 'POST', path: '/oauth/token', handle: (request) => identity.tokenEndpoint(request) },
        {
          method: 'GET',
          path: '/.well-known/jwks.json',
          handle: async () => ({ status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'max-age=300' }, body: JSON.stringify(identity.jwks) }),
        },
        { method: 'GET', path: '/health', handle: () => health.check() },
      ],
    );

    const pollers: Poller[] = [];
    cleanups.push(async () => {
      await Promise.all(pollers.map((poller) => poller.stop()));
    });
    for (const fn of loaded) {
      const trigger = fn.spec.queueTrigger;
      if (!trigger || !pollerWanted(options.queueTriggers, fn.name)) continue;
      pollers.push(
        await startPoller({
          queueUrl: environment[resourceEnv.queueUrl(trigger.queue)] ?? '',
          handler: fn.handler,
          functionName: fn.name,
          batchSize: trigger.batchSize,
          maxBatchingWindowSeconds: trigger.maxBatchingWindowSeconds,
          timeoutSeconds: fn.spec.timeoutSeconds,
          memoryMb: fn.spec.memoryMb,
          log,
        }),
      );
    }

    let stopped: Promise<void> | undefined;
    return {
      url,
      port: address.port,
      emulators,
      configFile,
      configCreated,
      localConfig,
      issueToken: (clientId, scopes) =>
        identity.issueToken(clientId, scopes ?? localConfig.clients[clientId]?.scopes ?? ALL_SCOPES),
      stop: () => (stopped ??= cleanUp()),
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

function pollerWanted(queueTriggers: KoerierHostOptions['queueTriggers'], functionName: string): boolean {
  if (queueTriggers === undefined || queueTriggers === true) return true;
  if (queueTriggers === false) return false;
  return queueTriggers.includes(functionName);
}

function applyEnvironment(values: Record<string, string>): () => void {
  const previous = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
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
