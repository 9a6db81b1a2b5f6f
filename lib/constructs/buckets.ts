/** The S3 buckets of lib/resources.ts: private, TLS-only, objects expiring after 14 days. */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { DEAD_LETTER_RETENTION } from './queues.js';

export class Buckets extends Construct {
  readonly byName: ReadonlyMap<string, s3.Bucket>;

  constructor(scope: Construct, id: string, specs: Readonly<Record<string, object>>) {
    super(scope, id);
    const buckets = new Map<string, s3.Bucket>();
    for (const name of Object.keys(specs)) {
      const bucket = new s3.Bucket(this, name, {
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        enforceSSL: true,
        minimumTLSVersion: 1.2,
        encryption: s3.BucketEncryption.S3_MANAGED,
        // Claim-check objects are needed only while a message referring to them can exist.
        lifecycleRules: [{ expiration: DEAD_LETTER_RETENTION, abortIncompleteMultipartUploadAfter: Duration.days(1) }],
        removalPolicy: RemovalPolicy.RETAIN,
      });
      Validations.of(bucket).acknowledge({
        id: 'AwsSolutions-S1',
        reason:
          "Only Koerier's own function roles touch these objects (writes at ingest, reads through GET /payloads/{id}), " +
          "and each such request is already recorded in the API access log and the function's log; S3 server access " +
          'logs would repeat that in a second bucket that itself could not be logged.',
      });
      buckets.set(name, bucket);
    }
    this.byName = buckets;
  }
}
