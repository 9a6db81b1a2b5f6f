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
import type {
  createDynamoDbClient,
  createKmsClient,
  createS3Client,
  createSesV2Client,
  createSqsClient,
} from '../aws/clients.js';
import type { KoerierConfig } from '../config.js';
import type { Clock } from '../core/ports/clock.js';
import type { Metrics } from '../core/ports/metrics.js';

/** The SDK clients a builder may ask for, by name. */
export interface ClientTypes {
  readonly dynamodb: ReturnType<typeof createDynamoDbClient>;
  readonly sqs: ReturnType<typeof createSqsClient>;
  readonly s3: ReturnType<typeof createS3Client>;
  readonly kms: ReturnType<typeof createKmsClient>;
  readonly sesv2: ReturnType<typeof createSesV2Client>;
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
  /** The one clock of this set: every app and builder that asks the time asks it. */
  readonly clock: Clock;
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

/** The builder of the member `K`. */
export type Member<K extends keyof KoerierDependencies> = Builder<KoerierDependencies[K]>;

/** The members every set has from the start, not built by a builder. */
export type EagerMember = 'config' | 'log' | 'admission' | 'clock';

/** The members a builder makes, on first read. */
export type LazyMember = Exclude<keyof KoerierDependencies, EagerMember>;

/** Every builder, by the member it makes: the laptop host's set (./aws-dependencies.ts) is of this type, so it is complete. */
export type Builders = { readonly [P in LazyMember]: Builder<KoerierDependencies[P]> };

/**
 * The dependencies a set of builders makes: its members and the eager ones. An app states what it
 * reads as a `Pick` of `KoerierDependencies`; a handler passes its app a `Composed<…>` of its
 * builder list, so a list that lacks a member the app reads does not compile.
 */
export type Composed<K extends LazyMember> = Pick<KoerierDependencies, EagerMember | K>;

export interface CompositionBase {
  readonly config: KoerierConfig;
  readonly log: Logger;
  readonly admission: ClientAdmission;
  readonly clock: Clock;
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
  const { config, log, admission, clock, options, clients, prepareClient } = base;
  const composition: Composition = {
    config,
    log,
    admission,
    clock,
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
 * The dependencies of `builders` on `composition`: each member built on first read and kept (per
 * composition, so sets composed on one share it). Built on first read rather than here because a
 * request that never reaches a member should not pay for it: the first SDK client a process makes
 * costs about 20 ms, the S3 client of the claim check 3–4 ms more (measured on Node 20), and a
 * caller refused by the token check reaches none. Which members a set has is the compiler's
 * business (`Composed`), so nothing here checks a read.
 */
export function composeDependencies<K extends LazyMember>(
  composition: Composition,
  builders: Pick<Builders, K>,
): Composed<K> {
  const { config, log, admission, clock } = composition;
  const dependencies = { config, log, admission, clock };
  for (const [name, build] of Object.entries<Builder<unknown>>(builders)) {
    Object.defineProperty(dependencies, name, {
      get: () => composition.once(build, () => build(composition)),
      enumerable: true,
    });
  }
  return dependencies as Composed<K>;
}
