/** The DynamoDB tables of functions/config/resources.ts, one per entry. */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct, type IConstruct } from 'constructs';
import type { KeySpec, TableSpec } from '../../functions/config/resources.js';

export interface TableWithSpec {
  /** A table of this stack, or (on a standby, koerier:standby) the replica of a primary's global table, by name. */
  readonly table: IConstruct & Pick<dynamodb.ITable, 'tableArn' | 'tableName'>;
  readonly spec: TableSpec;
}

/** Issue 35 (lib/standby-config.ts): tables this stack does not make, or makes strongly consistent. */
export interface TableOptions {
  /** Per table, the name of an existing table to use instead (a standby's replicas of the primary's global tables). */
  readonly existing?: Readonly<Record<string, string>>;
  /** The table made a multi-Region strongly consistent global table (its replicas: replicaRegions), with its witness. */
  readonly strong?: { readonly table: string; readonly witnessRegion: string | undefined };
}

export class Tables extends Construct {
  readonly byName: ReadonlyMap<string, TableWithSpec>;

  /** `replicaRegions`: per table, the other Regions of its global table (koerier:globalTableRegions, ./disaster-recovery.ts). */
  constructor(
    scope: Construct,
    id: string,
    specs: Readonly<Record<string, TableSpec>>,
    replicaRegions: Readonly<Record<string, readonly string[]>> = {},
    /** Per table, its pre-warmed throughput (koerier:warmThroughput, lib/capacity-config.ts); absent: DynamoDB's own. */
    warmThroughput: Readonly<Record<string, dynamodb.WarmThroughput>> = {},
    options: TableOptions = {},
  ) {
    super(scope, id);
    const tables = new Map<string, TableWithSpec>();
    for (const [name, spec] of Object.entries(specs)) {
      const existing = options.existing?.[name];
      if (existing !== undefined) {
        tables.set(name, { table: dynamodb.Table.fromTableName(this, name, existing), spec });
        continue;
      }
      if (options.strong?.table === name) {
        tables.set(name, {
          table: this.strongTable(
            name,
            spec,
            replicaRegions[name] ?? [],
            options.strong.witnessRegion,
            warmThroughput[name],
          ),
          spec,
        });
        continue;
      }
      const table = new dynamodb.Table(this, name, {
        partitionKey: attribute(spec.partitionKey),
        ...(spec.sortKey ? { sortKey: attribute(spec.sortKey) } : {}),
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        // AWS-managed KMS key: the function grants (koerier-function.ts) need no key permissions.
        encryption: dynamodb.TableEncryption.AWS_MANAGED,
        ...(spec.ttlAttribute ? { timeToLiveAttribute: spec.ttlAttribute } : {}),
        // Subscriptions and idempotency records outlive any one deployment of the stack.
        removalPolicy: RemovalPolicy.RETAIN,
        ...(replicaRegions[name]?.length ? { replicationRegions: [...replicaRegions[name]] } : {}),
        ...(warmThroughput[name] ? { warmThroughput: warmThroughput[name] } : {}),
      });
      for (const index of spec.globalIndexes ?? []) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          ...(index.sortKey ? { sortKey: attribute(index.sortKey) } : {}),
          ...(index.include
            ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
            : {}),
        });
      }
      tables.set(name, { table, spec });
    }
    this.byName = tables;
  }

  /**
   * A multi-Region strongly consistent global table (AWS::DynamoDB::GlobalTable): the mode is
   * chosen when the global table is made, so this is a new table, not the single-Region one with
   * replicas added. The same settings otherwise: on demand, PITR, AWS-managed key, TTL, retained.
   */
  private strongTable(
    name: string,
    spec: TableSpec,
    regions: readonly string[],
    witnessRegion: string | undefined,
    warm: dynamodb.WarmThroughput | undefined,
  ): dynamodb.TableV2 {
    return new dynamodb.TableV2(this, `${name}Strong`, {
      partitionKey: attribute(spec.partitionKey),
      ...(spec.sortKey ? { sortKey: attribute(spec.sortKey) } : {}),
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      ...(spec.ttlAttribute ? { timeToLiveAttribute: spec.ttlAttribute } : {}),
      removalPolicy: RemovalPolicy.RETAIN,
      multiRegionConsistency: dynamodb.MultiRegionConsistency.STRONG,
      replicas: regions.map((region) => ({ region })),
      ...(witnessRegion ? { witnessRegion } : {}),
      ...(warm ? { warmThroughput: warm } : {}),
      globalSecondaryIndexes: (spec.globalIndexes ?? []).map((index) => ({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        ...(index.sortKey ? { sortKey: attribute(index.sortKey) } : {}),
      })),
    });
  }
}

function attribute(key: KeySpec): dynamodb.Attribute {
  return { name: key.name, type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
}
