/**
 * The customer-managed KMS keys of functions/config/resources.ts, with yearly automatic rotation.
 * Issue 35 (lib/standby-config.ts): a key named in `multiRegion` is a multi-Region primary key; a
 * key named in `replicaOf` is, on a standby, a replica of the primary's (same key material and id,
 * so it decrypts what the primary encrypted and the global tables replicated).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface KeyOptions {
  readonly multiRegion?: readonly string[];
  /** Per key, the ARN of the multi-Region primary key this stack holds a replica of. */
  readonly replicaOf?: Readonly<Record<string, string>>;
}

export class Keys extends Construct {
  readonly byName: ReadonlyMap<string, kms.IKey>;

  constructor(scope: Construct, id: string, specs: Readonly<Record<string, object>>, options: KeyOptions = {}) {
    super(scope, id);
    const keys = new Map<string, kms.IKey>();
    for (const name of Object.keys(specs)) {
      const primary = options.replicaOf?.[name];
      keys.set(
        name,
        primary
          ? replicaKey(this, name, primary)
          : new kms.Key(this, name, {
              description: `Koerier ${name}`,
              enableKeyRotation: true,
              // CloudFormation refuses to change this on an existing key (the update fails, the key stays).
              ...(options.multiRegion?.includes(name) ? { multiRegion: true } : {}),
              // Deleting the key would make everything encrypted under it unreadable.
              removalPolicy: RemovalPolicy.RETAIN,
            }),
      );
    }
    this.byName = keys;
  }
}

/**
 * A replica of a multi-Region key. Its policy is the account's, as CDK's default for the stack's
 * own keys: the functions' IAM grants name it. Rotation is the primary's, shared by its replicas.
 */
function replicaKey(scope: Construct, name: string, primaryKeyArn: string): kms.IKey {
  const replica = new kms.CfnReplicaKey(scope, `${name}Replica`, {
    primaryKeyArn,
    description: `Koerier ${name} (replica of the primary stack's multi-Region key)`,
    keyPolicy: new iam.PolicyDocument({
      statements: [
        new iam.PolicyStatement({ actions: ['kms:*'], principals: [new iam.AccountRootPrincipal()], resources: ['*'] }),
      ],
    }),
  });
  // Deleting the replica would leave what the global tables replicated unreadable here.
  replica.applyRemovalPolicy(RemovalPolicy.RETAIN);
  return kms.Key.fromKeyArn(scope, `${name}ReplicaRef`, replica.attrArn);
}
