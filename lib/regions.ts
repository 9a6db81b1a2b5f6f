/**
 * The regions Koerier deploys to, one row each: the region's partition, the arm64 layer of the AWS
 * Parameters and Secrets Lambda Extension there (the functions are ARM_64; the layer reads the mTLS
 * client certificate, lib/trust-config.ts) and where the partition keeps CloudFront's web ACLs. It
 * is the one source of region-specific values in lib/: everything else builds ARNs from the
 * stack's partition and URL suffix, so a region outside this table is refused, not guessed at.
 * test/infra/regions.test.ts checks every row against aws-cdk-lib/region-info.
 *
 * When the stack's region is known at synth (`CDK_DEFAULT_REGION`, which `cdk synth` and
 * `cdk deploy` set from the profile), its row is read here and any other region stops the synth in
 * one line. When it is not (an environment-agnostic synth), the template names no partition
 * (`AWS::Partition`, `AWS::URLSuffix`) and carries the table as a CloudFormation mapping that the
 * stack's `Partition` output is read from: CloudFormation then refuses a region outside the table
 * when the change set is made, before anything is created.
 */
import { Arn, ArnFormat, Aws, CfnMapping, CfnOutput, Token, type Stack } from 'aws-cdk-lib';
import { StackConfigError } from './stack-config.js';

/** The extension version Koerier pins (CDK's `ParamsAndSecretsVersions.V1_0_103`): each row names that version's layer. */
export const PARAMS_AND_SECRETS_VERSION = '1.0.103';
const PARAMS_AND_SECRETS_ARM64_LAYER = 'AWS-Parameters-and-Secrets-Lambda-Extension-Arm64';

export interface KoerierRegion {
  /** What operators call it, for messages and docs/DEPLOYING.md. */
  readonly name: string;
  readonly partition: 'aws' | 'aws-eusc';
  /**
   * AWS's layer of the extension, version `PARAMS_AND_SECRETS_VERSION`, for arm64: the account that
   * publishes it in this region and the layer version. Absent: AWS publishes no arm64 layer here.
   */
  readonly paramsAndSecretsArm64?: { readonly account: string; readonly layerVersion: number };
  /** Where CLOUDFRONT-scope WAF web ACLs of this partition live (`koerier:edgeProtection` "cloudfront-waf"); absent: not known. */
  readonly cloudFrontWebAclRegion?: string;
}

/**
 * The commercial-partition regions in EU member states where the pinned extension version has an
 * arm64 layer (eu-south-2 has only later versions), and the AWS European Sovereign Cloud. For
 * eusc-de-east-1 the AWS Systems Manager User Guide ("AWS Parameters and Secrets Lambda Extension
 * ARNs", ARM64 table, last updated 28 July 2026) lists no layer, while its x86_64 table does, and
 * CDK's region-info knows none; where that partition keeps CloudFront's web ACLs we found nowhere.
 */
export const koerierRegions = {
  'eu-central-1': {
    name: 'Europe (Frankfurt)',
    partition: 'aws',
    paramsAndSecretsArm64: { account: '187925254637', layerVersion: 4 },
    cloudFrontWebAclRegion: 'us-east-1',
  },
  'eu-west-1': {
    name: 'Europe (Ireland)',
    partition: 'aws',
    paramsAndSecretsArm64: { account: '015030872274', layerVersion: 4 },
    cloudFrontWebAclRegion: 'us-east-1',
  },
  'eu-west-3': {
    name: 'Europe (Paris)',
    partition: 'aws',
    paramsAndSecretsArm64: { account: '780235371811', layerVersion: 1 },
    cloudFrontWebAclRegion: 'us-east-1',
  },
  'eu-north-1': {
    name: 'Europe (Stockholm)',
    partition: 'aws',
    paramsAndSecretsArm64: { account: '427196147048', layerVersion: 1 },
    cloudFrontWebAclRegion: 'us-east-1',
  },
  'eu-south-1': {
    name: 'Europe (Milan)',
    partition: 'aws',
    paramsAndSecretsArm64: { account: '325218067255', layerVersion: 1 },
    cloudFrontWebAclRegion: 'us-east-1',
  },
  'eusc-de-east-1': { name: 'AWS European Sovereign Cloud (Germany)', partition: 'aws-eusc' },
} as const satisfies Record<string, KoerierRegion>;

export type KoerierRegionName = keyof typeof koerierRegions;

const regionNames = Object.keys(koerierRegions) as KoerierRegionName[];

/** The row of `region`, or undefined for a region Koerier does not deploy to. */
export function koerierRegion(region: string): KoerierRegion | undefined {
  return Object.hasOwn(koerierRegions, region) ? koerierRegions[region as KoerierRegionName] : undefined;
}

/** The extension's arm64 layer ARN in `region`, or undefined where AWS publishes none. */
export function paramsAndSecretsLayerArn(region: string): string | undefined {
  const row = koerierRegion(region);
  const layer = row?.paramsAndSecretsArm64;
  if (row === undefined || layer === undefined) return undefined;
  return Arn.format({
    partition: row.partition,
    service: 'lambda',
    region,
    account: layer.account,
    resource: 'layer',
    resourceName: `${PARAMS_AND_SECRETS_ARM64_LAYER}:${layer.layerVersion}`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** What the stack asks of its region: each need that the region's row cannot meet is refused. */
export interface RegionNeeds {
  /** A function presents the mTLS client certificate, through the extension's layer. */
  readonly clientCertificate: boolean;
  /** `koerier:edgeProtection` "cloudfront-waf". */
  readonly cloudFrontWebAcl: boolean;
  /** ARNs given in the context, by context key: each must be in the region's partition. */
  readonly contextArns: Readonly<Record<string, readonly string[]>>;
}

/** What the stack builds with, from its region's row (or, for an environment-agnostic synth, from the mapping). */
export interface RegionSettings {
  /** The extension's layer ARN (a mapping lookup when the region is not known); absent when no client certificate is needed. */
  readonly paramsAndSecretsLayerArn?: string;
  /** Where the edge stack goes; absent when the region is not known at synth. */
  readonly cloudFrontWebAclRegion?: string;
}

/**
 * Looks the stack's region up in the table and checks `needs` against its row; throws one
 * StackConfigError (one line) naming every problem, for bin/koerier.ts to print. Adds the stack's
 * `Partition` output, read from the row (or the mapping), so the table is what the stack answers to.
 */
export function regionSettings(stack: Stack, needs: RegionNeeds): RegionSettings {
  if (Token.isUnresolved(stack.region)) return environmentAgnostic(stack, needs);
  const region = stack.region;
  const row = koerierRegion(region);
  if (row === undefined) {
    throw new StackConfigError(
      `Koerier does not deploy to region ${region}: it supports ${regionNames.join(', ')} (lib/regions.ts); set AWS_REGION or the profile to one of them`,
    );
  }
  const issues: string[] = [];
  for (const [key, arns] of Object.entries(needs.contextArns)) {
    for (const arn of arns) {
      const partition = /^arn:([^:]*):/.exec(arn)?.[1];
      if (partition !== row.partition)
        issues.push(
          `${key} names ${arn}, of partition ${partition ?? '?'}, but ${region} is in partition ${row.partition}`,
        );
    }
  }
  const layerArn = paramsAndSecretsLayerArn(region);
  if (needs.clientCertificate && layerArn === undefined) {
    issues.push(
      `koerier:clientCertificateSecretArn needs the AWS Parameters and Secrets Lambda Extension, and AWS publishes no arm64 layer of it ` +
        `in ${region} (lib/regions.ts): leave the client certificate out there`,
    );
  }
  if (needs.cloudFrontWebAcl && row.cloudFrontWebAclRegion === undefined) {
    issues.push(
      `koerier:edgeProtection "cloudfront-waf" needs the region of partition ${row.partition}'s CloudFront web ACLs, which lib/regions.ts ` +
        `does not know: use "none" in ${region}`,
    );
  }
  if (issues.length > 0)
    throw new StackConfigError(`Koerier cannot deploy this configuration to ${region}: ${issues.join('; ')}`);
  new CfnOutput(stack, 'Partition', {
    description: `The partition of ${region} (lib/regions.ts)`,
    value: row.partition,
  });
  return {
    ...(needs.clientCertificate && layerArn !== undefined ? { paramsAndSecretsLayerArn: layerArn } : {}),
    ...(row.cloudFrontWebAclRegion === undefined ? {} : { cloudFrontWebAclRegion: row.cloudFrontWebAclRegion }),
  };
}

/**
 * The table as a mapping, looked up with `AWS::Region` at deploy: a region without a row, or
 * without a layer where a client certificate needs one, fails CloudFormation's template
 * processing ("Unable to get mapping") before any resource is created.
 */
function environmentAgnostic(stack: Stack, needs: RegionNeeds): RegionSettings {
  const mapping = new CfnMapping(stack, 'KoerierRegions', {
    mapping: Object.fromEntries(
      regionNames.map((region) => {
        const layerArn = paramsAndSecretsLayerArn(region);
        return [
          region,
          {
            partition: koerierRegions[region].partition,
            ...(layerArn === undefined ? {} : { paramsAndSecretsArm64: layerArn }),
          },
        ];
      }),
    ),
  });
  new CfnOutput(stack, 'Partition', {
    description: "The partition of the stack's region, from Koerier's region table (lib/regions.ts)",
    value: mapping.findInMap(Aws.REGION, 'partition'),
  });
  return needs.clientCertificate
    ? { paramsAndSecretsLayerArn: mapping.findInMap(Aws.REGION, 'paramsAndSecretsArm64') }
    : {};
}
