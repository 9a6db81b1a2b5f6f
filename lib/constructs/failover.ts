/**
 * What lets a standby stack take over from a primary in another Region (issue 35,
 * lib/standby-config.ts, docs/DISASTER-RECOVERY.md "A standby stack in the second Region"):
 *
 * - the Route 53 failover alias records of the API name: PRIMARY on the primary, with a health
 *   check that calls the primary's own API (its execute-api host, not the public name, which
 *   would follow the failover and find the standby healthy), SECONDARY on the standby;
 * - the outputs the primary's `koerier:bucketReplicas` takes from the standby.
 */
import { CfnOutput, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as route53 from 'aws-cdk-lib/aws-route53';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { API_BASE_PATH } from '../../functions/config/resources.js';
import { REPLICATED_BUCKETS, versionForReplication } from './disaster-recovery.js';
import type { PublicDomain } from './public-domain.js';

/**
 * What the health check asks for: the API description, which API Gateway and a function in the
 * Region answer without a token. It proves the Region's API serves; not that SQS or DynamoDB do.
 */
export const HEALTH_CHECK_PATH = `${API_BASE_PATH}/openapi.json`;
/** Route 53 marks the primary unhealthy after this many failed checks, one every interval. */
export const HEALTH_CHECK_INTERVAL_SECONDS = 30;
export const HEALTH_CHECK_FAILURES = 3;

export interface FailoverRecordProps {
  readonly role: 'PRIMARY' | 'SECONDARY';
  readonly hostedZoneId: string;
  readonly publicDomain: PublicDomain;
  /** The HTTP API whose execute-api host the PRIMARY's health check calls. */
  readonly api: apigw.HttpApi;
}

/** One failover alias record of the API name; the PRIMARY's with its health check. */
export class FailoverRecord extends Construct {
  readonly record: route53.CfnRecordSet;
  readonly healthCheck: route53.CfnHealthCheck | undefined;

  constructor(scope: Construct, id: string, props: FailoverRecordProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.healthCheck =
      props.role === 'PRIMARY'
        ? new route53.CfnHealthCheck(this, 'HealthCheck', {
            healthCheckConfig: {
              type: 'HTTPS',
              fullyQualifiedDomainName: `${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`,
              port: 443,
              resourcePath: HEALTH_CHECK_PATH,
              enableSni: true,
              requestInterval: HEALTH_CHECK_INTERVAL_SECONDS,
              failureThreshold: HEALTH_CHECK_FAILURES,
            },
            healthCheckTags: [
              { key: 'Name', value: `${stack.stackName} API (failover of ${props.publicDomain.name})` },
            ],
          })
        : undefined;
    this.record = new route53.CfnRecordSet(this, 'Record', {
      hostedZoneId: props.hostedZoneId,
      name: props.publicDomain.name,
      type: 'A',
      setIdentifier: `${stack.stackName}-${props.role.toLowerCase()}`,
      failover: props.role,
      ...(this.healthCheck ? { healthCheckId: this.healthCheck.attrHealthCheckId } : {}),
      aliasTarget: {
        dnsName: props.publicDomain.domainName.regionalDomainName,
        hostedZoneId: props.publicDomain.domainName.regionalHostedZoneId,
        // The PRIMARY is judged by its health check; the SECONDARY is answered whenever the PRIMARY is not.
        evaluateTargetHealth: false,
      },
    });
  }
}

/**
 * A standby's archive and payload buckets are the replication destinations (versioned, as S3
 * requires): the outputs are what the primary's `koerier:bucketReplicas` names.
 */
export function replicaBucketOutputs(stack: Stack, buckets: ReadonlyMap<string, s3.Bucket>): void {
  for (const name of REPLICATED_BUCKETS) {
    const bucket = buckets.get(name);
    if (!bucket?.encryptionKey) continue;
    versionForReplication(bucket);
    new CfnOutput(stack, `${name}ReplicaBucketArn`, {
      description: `The primary's koerier:bucketReplicas.${name}.bucket`,
      value: bucket.bucketArn,
    });
    new CfnOutput(stack, `${name}ReplicaKmsKeyArn`, {
      description: `The primary's koerier:bucketReplicas.${name}.kmsKey`,
      value: bucket.encryptionKey.keyArn,
    });
  }
}
