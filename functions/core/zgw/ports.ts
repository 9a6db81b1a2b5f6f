/**
 * What the ZGW Notificaties API adapter (issue 34) needs from the world, as ports: its kanalen and
 * abonnementen (`DynamoDbZgwStore` in functions/aws; in memory for the tests), the probe of an
 * abonnement's callback (outbound HTTP through the SSRF guard) and Koerier's own ingest.
 */
export interface KanaalRecord {
  readonly uuid: string;
  readonly naam: string;
  readonly documentatieLink: string;
  readonly filters: readonly string[];
}

export interface FilterGroupRecord {
  readonly naam: string;
  readonly filters: Readonly<Record<string, string>>;
}

export interface CloudEventFilterGroupRecord {
  readonly typeSubstring: string;
  readonly filters: Readonly<Record<string, string>>;
}

export interface AbonnementRecord {
  readonly uuid: string;
  /** The consumer that made it. */
  readonly clientId: string;
  readonly callbackUrl: string;
  /** The `auth` header value, sealed by the credential cipher (write-only: never answered, never logged). */
  readonly sealedAuth: string;
  readonly kanalen: readonly FilterGroupRecord[];
  readonly sendCloudevents: boolean;
  readonly cloudeventFilters: readonly CloudEventFilterGroupRecord[];
  readonly createdAt: string;
}

export interface ZgwStore {
  listKanalen(): Promise<readonly KanaalRecord[]>;
  readKanaal(uuid: string): Promise<KanaalRecord | undefined>;
  kanaalNamed(naam: string): Promise<KanaalRecord | undefined>;
  /** Stores a new kanaal; throws `KanaalNameTakenError` when its name is taken (names are unique). */
  createKanaal(kanaal: KanaalRecord): Promise<void>;
  /** Replaces a kanaal (its name unchanged). */
  replaceKanaal(kanaal: KanaalRecord): Promise<void>;
  listAbonnementen(): Promise<readonly AbonnementRecord[]>;
  readAbonnement(uuid: string): Promise<AbonnementRecord | undefined>;
  putAbonnement(abonnement: AbonnementRecord): Promise<void>;
  /** Answers whether there was one to delete. */
  deleteAbonnement(uuid: string): Promise<boolean>;
}

export class KanaalNameTakenError extends Error {
  override name = 'KanaalNameTakenError';
}

/** Posts a notificatie to a callback as Open Notificaties' checks do; answers the status, or 0 when no answer came. */
export type CallbackProbe = (url: string, body: unknown, authorization: string | undefined) => Promise<number>;

/** Hands a CloudEvent (a notificatie's, or one sent to POST /cloudevents) to Koerier's ingest under `publisher`, with the Idempotency-Key; throws its refusals. */
export type ZgwIngest = (event: object, idempotencyKey: string, publisher: string) => Promise<void>;

/** Seals and opens an abonnement's `auth` (the credential cipher, bound to the abonnement). */
export interface AuthSealer {
  seal(auth: string, abonnementUuid: string): Promise<string>;
  open(sealed: string, abonnementUuid: string): Promise<string>;
}
