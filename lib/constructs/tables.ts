/** The DynamoDB tables of functions/config/resources.ts, one per entry. */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import type { KeySpec, TableSpec } from '../../functions/config/resources.js';

export interface TableWithSpec {
  readonly table: dynamodb.Table;
  readonly spec: TableSpec;
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
  ) {
    super(scope, id);
    const tables = new Map<string, TableWithSpec>();
    for (const [name, spec] of Object.entries(specs)) {
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
}

function attribute(key: KeySpec): dynamodb.Attribute {
  return { name: key.name, type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
}
