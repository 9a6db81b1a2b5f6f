/**
 * The standby deployment and what it needs from the primary (issue 35, docs/DISASTER-RECOVERY.md,
 * "A standby stack in the second Region"), read from the CDK context and refused whole, every
 * problem named, at synth:
 *
 * - `koerier:standby`: this stack is the standby of a primary in another Region. It does not
 *   create the tables the primary's global tables replicate into its Region (it names the replicas),
 *   it decrypts the replicated sink credentials with a replica of the primary's multi-Region
 *   credentials key, and its archive and payload buckets are the replication destinations the
 *   primary's `koerier:bucketReplicas` names (outputs `…ReplicaBucketArn`, `…ReplicaKmsKeyArn`).
 * - `koerier:apiHostedZoneId`: the Route 53 hosted zone of `koerier:publicDomain`. The primary
 *   gets the PRIMARY failover alias record with a health check on its own API, the standby the
 *   SECONDARY one: the API name moves by itself when the primary stops answering.
 * - `koerier:multiRegionKeys`: the primary's credentials key is a multi-Region primary key, so a
 *   standby can hold a replica of it.
 * - `koerier:globalTableConsistency` `"strong"` (with `koerier:globalTableWitnessRegion`): the
 *   idempotency table as a multi-Region strongly consistent (MRSC) global table.
 */
import { GLOBAL_TABLES } from './constructs/disaster-recovery.js';
import { contextKey as standbyContextKey } from './stack-config.js';

export interface StandbySettings {
  /** The primary stack's Region. */
  readonly primaryRegion: string;
  /** Per global table, the name of its replica in this Region (a global table's replicas share the primary's name). */
  readonly tables: Readonly<Record<(typeof GLOBAL_TABLES)[number], string>>;
  /** The primary's multi-Region credentials key (its output `CredentialsKeyArn`): the standby holds a replica of it. */
  readonly credentialsKey: string;
}

export interface FailoverSettings {
  /** Set: this stack is a standby. */
  readonly standby: StandbySettings | undefined;
  /** The hosted zone of `koerier:publicDomain`, for the failover records. */
  readonly apiHostedZoneId: string | undefined;
  readonly multiRegionKeys: boolean;
  readonly strongConsistency: { readonly witnessRegion: string | undefined } | undefined;
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const HOSTED_ZONE_ID = /^Z[A-Z0-9]{1,31}$/;
/** A multi-Region key's id starts with `mrk-`; a single-Region key cannot be replicated. */
const MULTI_REGION_KEY_ARN = /^arn:aws[a-z-]*:kms:([a-z]{2}(?:-[a-z]+)+-\d):\d{12}:key\/mrk-[0-9a-f]{32}$/;
/**
 * The Region sets a strongly consistent global table may span, all its Regions in one
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_HowItWorks.html).
 */
const MRSC_REGION_SETS: readonly (readonly string[])[] = [
  ['us-east-1', 'us-east-2', 'us-west-2'],
  ['eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-central-1'],
  ['ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3'],
];
const STANDBY_FIELDS = ['primaryRegion', 'tables', 'credentialsKey'];

/** What the other settings say that these depend on. */
export interface FailoverContextFacts {
  readonly stackRegion: string | undefined;
  readonly globalTableRegions: readonly string[];
  readonly bucketReplicas: boolean;
  readonly publicDomain: boolean;
}

export function parseFailoverSettings(
  context: (key: string) => unknown,
  facts: FailoverContextFacts,
): FailoverSettings {
  const problems: string[] = [];
  const parse = (value: unknown) => (typeof value === 'string' && /^\s*[[{]/.test(value) ? JSON.parse(value) : value);
  const key = standbyContextKey;

  const standby = parseStandby(parse(context(key.standby)), facts, problems);

  const zone = context(key.apiHostedZoneId);
  if (zone !== undefined && (typeof zone !== 'string' || !HOSTED_ZONE_ID.test(zone)))
    problems.push(
      `${key.apiHostedZoneId} must be a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ, got ${JSON.stringify(zone)}`,
    );
  else if (zone !== undefined && !facts.publicDomain)
    problems.push(
      `${key.apiHostedZoneId} holds the failover records of the API name: it needs koerier:publicDomain (with its certificate in this stack's Region)`,
    );

  const keysRaw = parse(context(key.multiRegionKeys));
  if (keysRaw !== undefined && typeof keysRaw !== 'boolean' && keysRaw !== 'true' && keysRaw !== 'false')
    problems.push(`${key.multiRegionKeys} must be true or false, got ${JSON.stringify(keysRaw)}`);
  const multiRegionKeys = keysRaw === true || keysRaw === 'true';
  if (multiRegionKeys && standby)
    problems.push(
      `${key.multiRegionKeys} makes this stack's credentials key a multi-Region primary key; a standby (${key.standby}) holds a replica of the primary's instead: leave it out`,
    );

  const strongConsistency = parseConsistency(context, facts, problems);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { standby, apiHostedZoneId: zone as string | undefined, multiRegionKeys, strongConsistency };
}

function parseStandby(raw: unknown, facts: FailoverContextFacts, problems: string[]): StandbySettings | undefined {
  const key = standbyContextKey.standby;
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(
      `${key} must be an object, e.g. {"primaryRegion": "eu-west-1", "tables": {"partners": "…", "subscriptions": "…", "routes": "…", "idempotency": "…"}, "credentialsKey": "arn:<partition>:kms:eu-west-1:…:key/mrk-…"}`,
    );
    return undefined;
  }
  const before = problems.length;
  const value = raw as Record<string, unknown>;
  for (const field of Object.keys(value))
    if (!STANDBY_FIELDS.includes(field))
      problems.push(`${key}: "${field}" is not a field (${STANDBY_FIELDS.join(', ')})`);
  const primaryRegion = value['primaryRegion'];
  if (typeof primaryRegion !== 'string' || !REGION.test(primaryRegion))
    problems.push(`${key}.primaryRegion must be the primary stack's Region, e.g. "eu-west-1"`);
  else if (primaryRegion === facts.stackRegion)
    problems.push(
      `${key}.primaryRegion is this stack's own Region ${primaryRegion}: a standby stands by in another Region`,
    );
  const tables = value['tables'];
  if (typeof tables !== 'object' || tables === null || Array.isArray(tables)) {
    problems.push(
      `${key}.tables must name the replica in this Region of each of the primary's global tables (${GLOBAL_TABLES.join(', ')}): the primary's table names`,
    );
  } else {
    const named = tables as Record<string, unknown>;
    for (const table of GLOBAL_TABLES)
      if (typeof named[table] !== 'string' || !TABLE_NAME.test(named[table]))
        problems.push(
          `${key}.tables.${table} must be the name of the primary's ${table} table (its replica here has the same name)`,
        );
    for (const table of Object.keys(named))
      if (!(GLOBAL_TABLES as readonly string[]).includes(table))
        problems.push(`${key}.tables: "${table}" is not a global table (${GLOBAL_TABLES.join(', ')})`);
  }
  const credentialsKey = value['credentialsKey'];
  const keyRegion = typeof credentialsKey === 'string' ? MULTI_REGION_KEY_ARN.exec(credentialsKey)?.[1] : undefined;
  if (keyRegion === undefined)
    problems.push(
      `${key}.credentialsKey must be the ARN of the primary's multi-Region credentials key (arn:…:kms:<region>:<account>:key/mrk-…, the primary's output CredentialsKeyArn with koerier:multiRegionKeys): without a replica of it the standby cannot decrypt the replicated sink credentials`,
    );
  else if (typeof primaryRegion === 'string' && keyRegion !== primaryRegion)
    problems.push(`${key}.credentialsKey is in ${keyRegion}, not in the primary's Region ${primaryRegion}`);
  if (facts.globalTableRegions.length > 0)
    problems.push(
      `${key} and koerier:globalTableRegions: a standby uses the primary's global tables, it makes none; leave koerier:globalTableRegions to the primary`,
    );
  if (facts.bucketReplicas)
    problems.push(
      `${key} and koerier:bucketReplicas: a standby's buckets are the replication destinations; set koerier:bucketReplicas on the primary`,
    );
  if (!facts.publicDomain)
    problems.push(
      `${key} needs koerier:publicDomain: the standby takes over the primary's API name, served here with a certificate in this stack's Region`,
    );
  if (problems.length > before) return undefined;
  return value as unknown as StandbySettings;
}

/** MRSC: three replicas, or two and a witness, all in one Region set (DynamoDB refuses mixing them). */
function parseConsistency(
  context: (key: string) => unknown,
  facts: FailoverContextFacts,
  problems: string[],
): FailoverSettings['strongConsistency'] {
  const key = standbyContextKey;
  const mode = context(key.globalTableConsistency);
  const witness = context(key.globalTableWitnessRegion);
  if (mode !== undefined && mode !== 'eventual' && mode !== 'strong') {
    problems.push(`${key.globalTableConsistency} must be "eventual" or "strong", got ${JSON.stringify(mode)}`);
    return undefined;
  }
  if (mode !== 'strong') {
    if (witness !== undefined)
      problems.push(
        `${key.globalTableWitnessRegion} is a witness of a strongly consistent global table: it needs ${key.globalTableConsistency} "strong"`,
      );
    return undefined;
  }
  const before = problems.length;
  if (witness !== undefined && (typeof witness !== 'string' || !REGION.test(witness)))
    problems.push(`${key.globalTableWitnessRegion} must be a Region, e.g. "eu-west-2", got ${JSON.stringify(witness)}`);
  const replicas = facts.globalTableRegions.length;
  if (replicas === 0)
    problems.push(
      `${key.globalTableConsistency} "strong" is a mode of a global table: list its other Regions in koerier:globalTableRegions`,
    );
  else if (witness === undefined && replicas !== 2)
    problems.push(
      `${key.globalTableConsistency} "strong" needs three Regions, or two and a witness: koerier:globalTableRegions lists ${replicas} besides this stack's; list 2, or 1 with ${key.globalTableWitnessRegion}`,
    );
  else if (witness !== undefined && replicas !== 1)
    problems.push(
      `${key.globalTableWitnessRegion} with ${replicas} other Regions: a strongly consistent global table has two replicas and a witness, or three replicas without one`,
    );
  if (facts.stackRegion === undefined)
    problems.push(
      `${key.globalTableConsistency} "strong" needs the stack's Region at synth (CDK_DEFAULT_REGION, as cdk deploy with a profile sets it): DynamoDB offers it in some Regions only`,
    );
  const regions = [facts.stackRegion, ...facts.globalTableRegions, witness].filter(
    (region): region is string => typeof region === 'string' && REGION.test(region),
  );
  if (typeof witness === 'string' && [facts.stackRegion, ...facts.globalTableRegions].includes(witness))
    problems.push(`${key.globalTableWitnessRegion} ${witness} already holds a replica: a witness is a third Region`);
  const set = MRSC_REGION_SETS.find((members) => members.includes(regions[0] ?? ''));
  if (regions.length > 0 && (!set || !regions.every((region) => set.includes(region))))
    problems.push(
      `${key.globalTableConsistency} "strong": all its Regions must be in one of DynamoDB's strongly consistent Region sets (${MRSC_REGION_SETS.map((s) => s.join(', ')).join('; ')}), got ${regions.join(', ')}`,
    );
  return problems.length > before ? undefined : { witnessRegion: witness as string | undefined };
}
