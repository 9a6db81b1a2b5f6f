/**
 * The S3 buckets of functions/config/resources.ts: private, TLS-only, encrypted with a customer-managed KMS key
 * of the stack (rotating, S3 Bucket Key on), objects expiring by a lifecycle rule after their
 * `objectRetentionSeconds`, and server access logs to one log bucket — who read which claim-check
 * object, also through a presigned URL, which the functions' own logs cannot see.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { BucketSpec } from '../../functions/config/resources.js';

/** How long server access logs are kept: long enough to answer "who read what" after the objects are gone. */
export const ACCESS_LOG_RETENTION_DAYS = 400;
const ACCESS_LOG_RETENTION = Duration.days(ACCESS_LOG_RETENTION_DAYS);

export class Buckets extends Construct {
  readonly byName: ReadonlyMap<string, s3.Bucket>;
  readonly accessLogs: s3.Bucket;

  constructor(scope: Construct, id: string, specs: Readonly<Record<string, BucketSpec>>) {
    super(scope, id);
    // Log delivery writes with SSE-S3 only (it cannot use a KMS key); the logs hold no event data.
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: s3.BucketEncryption.S3_MANAGED,
      lifecycleRules: [{ expiration: ACCESS_LOG_RETENTION }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const buckets = new Map<string, s3.Bucket>();
    for (const [name, spec] of Object.entries(specs)) {
      const key = new kms.Key(this, `${name}Key`, {
        description: `Koerier ${name} bucket`,
        enableKeyRotation: true,
        // Deleting the key would make every object under it unreadable.
        removalPolicy: RemovalPolicy.RETAIN,
      });
      const bucket = new s3.Bucket(this, name, {
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        enforceSSL: true,
        minimumTLSVersion: 1.2,
        encryption: s3.BucketEncryption.KMS,
        encryptionKey: key,
        // One data key per bucket and period instead of a KMS call per object.
        bucketKeyEnabled: true,
        // CDK's own Bucket does not satisfy its IBucket under exactOptionalPropertyTypes (isWebsite is optional in one, required in the other).
        serverAccessLogsBucket: this.accessLogs as s3.IBucket,
        serverAccessLogsPrefix: `${name}/`,
        // Claim-check objects are needed while a message or a replay can refer to them: the archive's
        // retention plus a day past the longest queue retention (claimCheckRetentionSeconds in resources.ts).
        // Nothing deletes them earlier (other subscribers may still fetch).
        // Contract documents have no retention: a published version stays fetchable.
        lifecycleRules: [
          spec.objectRetentionSeconds === undefined
            ? { abortIncompleteMultipartUploadAfter: Duration.days(1) }
            : {
                expiration: Duration.seconds(spec.objectRetentionSeconds),
                abortIncompleteMultipartUploadAfter: Duration.days(1),
              },
        ],
        removalPolicy: RemovalPolicy.RETAIN,
      });
      buckets.set(name, bucket);
    }
    this.byName = buckets;
  }
}
