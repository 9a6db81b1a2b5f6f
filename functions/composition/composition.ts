/**
 * How a set of dependencies is put together from adapter builders (./adapters.ts). A builder is a
 * plain function of a `Composition` that builds one member of `KoerierDependencies`; a set names
 * the builders it has, and only those end up in its bundle: esbuild keeps what is referenced, so a
 * function whose set names no S3 adapter carries no S3 client (issue 15, item 4).
 *
 * The laptop host composes every builder (./aws-dependencies.ts), a Lambda function the ones its
 * app reads (./lambda-dependencies.ts and functions/handlers/*.ts).
 */
import type { KoerierDependencies } from '../app/dependencies.js';
import type { ClientAdmission } from '../app/client-throttling.js';
import type { Logger } from '../app/logger.js';
import type { createDynamoDbClient, createKmsClient, createS3Client, createSqsClient } from '../aws/clients.js';
import type { KoerierConfig } from '../config.js';
import type { Metrics } from '../core/ports/metrics.js';

/** The SDK clients a builder may ask for, by name. */
export interface ClientTypes {
  readonly dynamodb: ReturnType<typeof createDynamoDbClient>;
  readonly sqs: ReturnType<typeof createSqsClient>;
  readonly s3: ReturnType<typeof createS3Client>;
  readonly kms: ReturnType<typeof createKmsClient>;
}
export type ClientName = keyof ClientTypes;

/**
 * One kind of SDK client and how to make one. Builders name the kind they send with (./client-kinds.ts),
 * so the constructor is bundled only where a builder that uses it is.
 */
export interface ClientKind<N extends ClientName> {
  readonly name: N;
  create(): ClientTypes[N];
}

/** Where a composition's clients come from: the laptop's own set, or this Lambda container's. */
export type ClientSource = <N extends ClientName>(kind: ClientKind<N>) => ClientTypes[N];

/** What every member is built from. */
export interface Composition {
  readonly config: KoerierConfig;
  readonly log: Logger;
  readonly admission: ClientAdmission;
  readonly options: CompositionOptions;
  /** This composition's client of that kind, built (and traced, in Lambda) on first use. */
  client<N extends ClientName>(kind: ClientKind<N>): ClientTypes[N];
  /** `build()`'s value, the first time this composition asks with that key; the same value after. */
  once<T>(key: object, build: () => T): T;
}

export interface CompositionOptions {
  /** The gateway's figures. Default: Powertools EMF records in Lambda (`config.delivery.emitMetrics`), none elsewhere. */
  readonly metrics?: Metrics;
  /** Where the EMF metric records go. Default: standard output, where CloudWatch reads them. */
  readonly writeMetricRecord?: (record: string) => void;
  /** The Lambda session token the Parameters and Secrets extension asks for (the mTLS client certificate). */
  readonly sessionToken?: () => string | undefined;
}

/** A builder of one member. */
export type Builder<T> = (composition: Composition) => T;

/** The members that are built on first read; `config`, `log` and `admission` every set has. */
export type LazyMember = Exclude<keyof KoerierDependencies, 'config' | 'log' | 'admission'>;

/** A set of builders: the members a function has. */
export type Builders<K extends LazyMember = LazyMember> = { readonly [P in K]: Builder<KoerierDependencies[P]> };

/**
 * Every lazy member by name, so a set can say which it lacks. The `Record` type makes the list
 * complete: a member added to `KoerierDependencies` and not here does not compile.
 */
const LAZY_MEMBERS: Readonly<Record<LazyMember, true>> = {
  authenticate: true,
  idempotency: true,
  publishRateWindow: true,
  inboundQueue: true,
  deliveryQueue: true,
  subscriptions: true,
  routeIndex: true,
  partners: true,
  partnerStore: true,
  routedEvents: true,
  deliveryState: true,
  claimCheckStore: true,
  payloadLedger: true,
  credentialCipher: true,
  signingKeys: true,
  pullQueues: true,
  rejectionMarks: true,
  givenUpLocks: true,
  pollLeases: true,
  quotaHolds: true,
  uploadUsage: true,
  lockTokenKey: true,
  deliveryHttp: true,
  handshakeHttp: true,
  eventArchive: true,
  replayStore: true,
  replayQueue: true,
  operationalEvents: true,
  contractStore: true,
  contractDocuments: true,
  dataContracts: true,
  contractLifecycle: true,
  metrics: true,
  recordDeliveryMetrics: true,
};

export interface CompositionBase {
  readonly config: KoerierConfig;
  readonly log: Logger;
  readonly admission: ClientAdmission;
  readonly options: CompositionOptions;
  readonly clients: ClientSource;
  /** Applied to each client once, when it is first asked for: the throttling count, and X-Ray capture in Lambda. */
  readonly prepareClient?: <T extends ClientTypes[ClientName]>(client: T, composition: Composition) => T;
}

export function createComposition(base: CompositionBase): Composition {
  const built = new Map<object, { value: unknown }>();
  const once = <T>(key: object, build: () => T): T => {
    if (!built.has(key)) {
      const value = build();
      // A builder that keeps itself (`composition.once(itself, …)`) has already stored the same value.
      if (!built.has(key)) built.set(key, { value });
    }
    return built.get(key)!.value as T;
  };
  const { config, log, admission, options, clients, prepareClient } = base;
  const composition: Composition = {
    config,
    log,
    admission,
    options,
    once,
    client: (kind) =>
      once(kind, () => {
        const client = clients(kind);
        return prepareClient ? prepareClient(client, composition) : client;
      }),
  };
  return composition;
}

/**
 * The dependencies of `builders` on `composition`: each member built on first read and kept. A
 * member the set lacks throws when read, naming the set, so a function that reaches for an adapter
 * its handler did not list fails on its first request rather than with `undefined` somewhere later;
 * test/unit/composition/function-adapters.test.ts checks every handler's list against its app.
 */
export function composeDependencies(
  setName: string,
  composition: Composition,
  builders: Partial<Builders>,
): KoerierDependencies {
  const target = {
    config: composition.config,
    log: composition.log,
    admission: composition.admission,
  } as KoerierDependencies;
  for (const name of Object.keys(LAZY_MEMBERS) as LazyMember[]) {
    const build = builders[name] as Builder<unknown> | undefined;
    const get =
      build === undefined
        ? () => {
            throw new Error(
              `The ${setName} dependencies have no "${name}": add its builder (functions/composition/adapters.ts) to the handler's adapters.`,
            );
          }
        : () => composition.once(build, () => build(composition));
    Object.defineProperty(target, name, { get, enumerable: build !== undefined });
  }
  return target;
}
