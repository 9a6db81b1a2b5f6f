/** The customer-managed KMS keys of functions/config/resources.ts, with yearly automatic rotation. */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export class Keys extends Construct {
  readonly byName: ReadonlyMap<string, kms.Key>;

  constructor(scope: Construct, id: string, specs: Readonly<Record<string, object>>) {
    super(scope, id);
    const keys = new Map<string, kms.Key>();
    for (const name of Object.keys(specs)) {
      keys.set(
        name,
        new kms.Key(this, name, {
          description: `Koerier ${name}`,
          enableKeyRotation: true,
          // Deleting the key would make everything encrypted under it unreadable.
          removalPolicy: RemovalPolicy.RETAIN,
        }),
      );
    }
    this.byName = keys;
  }
}
