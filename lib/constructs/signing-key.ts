/**
 * The delivery-signing key (issue 12, item 6): an asymmetric KMS key, ECC_NIST_P256 for
 * ecdsa-p256-sha256 (RFC 9421 §3.3.4). The private key never leaves KMS; each signature is one
 * kms:Sign. KMS cannot rotate asymmetric keys itself: rotation is a new key put in front of
 * `koerier:signingKeys` (docs/OPERATIONS.md, "Signed deliveries").
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export class SigningKey extends Construct {
  readonly key: kms.Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new kms.Key(this, 'Key', {
      description: 'Koerier delivery signing (RFC 9421, ecdsa-p256-sha256)',
      keySpec: kms.KeySpec.ECC_NIST_P256,
      keyUsage: kms.KeyUsage.SIGN_VERIFY,
      // Kept when the stack stops using it: receivers may still verify what it signed during a rotation.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
