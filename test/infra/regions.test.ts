/**
 * Issue 27 §1, CDK: Koerier deploys to the regions of one table (lib/regions.ts), each in its own
 * partition. The table agrees with aws-cdk-lib/region-info; a region outside it, or a setting its
 * row cannot carry, stops the synth with one line; every ARN a synthesised template builds carries
 * its region's partition; and lib/ hard-codes neither a partition nor a URL suffix.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/koerier-stack.js';
import {
  koerierRegions,
  PARAMS_AND_SECRETS_VERSION,
  paramsAndSecretsLayerArn,
  type KoerierRegionName,
} from '../../lib/regions.js';
import { StackConfigError } from '../../lib/stack-config.js';
import { synthContext } from './synth.js';
import { everyOption, synthInRegion, TEST_ACCOUNT, type TemplateJson } from './synth-in-region.js';

const regionNames = Object.keys(koerierRegions) as KoerierRegionName[];
const UNSUPPORTED = `it supports ${regionNames.join(', ')} (lib/regions.ts); set AWS_REGION or the profile to one of them`;

/** Stands for a value only known at deploy (a resource's attribute); never a partition. */
const OPAQUE = '\u2400';

/** What CloudFormation puts in for the pseudo parameters when the stack is deployed to `region`. */
function pseudoParameters(region: string): Record<string, string> {
  const info = RegionInfo.get(region);
  return {
    'AWS::Partition': info.partition!,
    'AWS::URLSuffix': info.domainSuffix!,
    'AWS::Region': region,
    'AWS::AccountId': TEST_ACCOUNT,
  };
}

/** A template value as CloudFormation resolves it: joins joined, pseudo parameters put in, every other reference opaque. */
function rendered(value: unknown, pseudo: Readonly<Record<string, string>>): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return OPAQUE;
  const node = value as Record<string, unknown>;
  if (typeof node.Ref === 'string') return pseudo[node.Ref] ?? OPAQUE;
  const join = node['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1]))
    return join[1].map((part) => rendered(part, pseudo)).join(join[0]);
  const sub = node['Fn::Sub'];
  const [text, variables] = Array.isArray(sub) ? sub : [sub, {}];
  if (typeof text === 'string') {
    return text.replace(
      /\$\{([^}]+)\}/g,
      (_, name: string) => pseudo[name] ?? rendered((variables as Record<string, unknown>)[name], pseudo),
    );
  }
  return OPAQUE;
}

/** Every string the template holds, joins and substitutions rendered whole, each with the path of keys that leads to it. */
function stringsOf(template: unknown, pseudo: Readonly<Record<string, string>>): { path: string[]; text: string }[] {
  const found: { path: string[]; text: string }[] = [];
  const visit = (node: unknown, at: string[]) => {
    if (typeof node === 'string') found.push({ path: at, text: node });
    else if (Array.isArray(node)) node.forEach((item, index) => visit(item, [...at, String(index)]));
    else if (typeof node === 'object' && node !== null) {
      if ('Fn::Join' in node || 'Fn::Sub' in node) found.push({ path: at, text: rendered(node, pseudo) });
      else for (const [key, child] of Object.entries(node)) visit(child, [...at, key]);
    }
  };
  visit(template, []);
  return found;
}

/** The partition of every ARN in the template, as deployed to `pseudo`'s region. */
function arnPartitions(
  template: unknown,
  pseudo: Readonly<Record<string, string>>,
): { arn: string; partition: string }[] {
  return stringsOf(template, pseudo).flatMap(({ text }) =>
    [...text.matchAll(/arn:([^:,\s"]*):[^,\s"]*/g)].map((match) => ({ arn: match[0], partition: match[1]! })),
  );
}

/**
 * Host names under amazonaws.com. Service principals (`lambda.amazonaws.com`) have that form in
 * every partition ("all service principal names are standardized", aws-cdk-lib's ServicePrincipal),
 * so a principal is no host: what stands in an IAM `Principal.Service` or a Lambda permission's `Principal`.
 */
function amazonawsComHosts(template: TemplateJson, pseudo: Readonly<Record<string, string>>): string[] {
  return stringsOf(template, pseudo)
    .filter(
      ({ path: at }) =>
        !(at.at(-2) === 'Principal' && at.at(-1) === 'Service') &&
        !(at.at(-3) === 'Principal' && at.at(-2) === 'Service'),
    )
    .filter(
      ({ path: at }) =>
        !(
          at[0] === 'Resources' &&
          template.Resources[at[1]!]?.Type === 'AWS::Lambda::Permission' &&
          at.at(-1) === 'Principal'
        ),
    )
    .map(({ text }) => text)
    .filter((text) => text.includes('amazonaws.com'));
}

function refusal(region: string | undefined, context: Record<string, unknown>): string {
  try {
    synthInRegion(region, context);
  } catch (error) {
    expect(error).toBeInstanceOf(StackConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the synth to be refused');
}

/** The Lambda layers of Koerier's own functions (functions/config/resources.ts; CDK's console upload function brings its own). */
function layersOf(template: TemplateJson): unknown[] {
  return Object.values(template.Resources)
    .filter(
      (resource) =>
        resource.Type === 'AWS::Lambda::Function' &&
        /^Koerier /.test(String(resource.Properties.Description)) &&
        resource.Properties.Layers,
    )
    .flatMap((resource) => resource.Properties.Layers as unknown[]);
}

describe('issue 27: the region table (lib/regions.ts)', () => {
  it('CARD-2: every row agrees with aws-cdk-lib/region-info on its partition and on the arm64 layer of the pinned Parameters and Secrets version', () => {
    expect(PARAMS_AND_SECRETS_VERSION).toBe(lambda.ParamsAndSecretsVersions.V1_0_103);
    expect(regionNames).toEqual(expect.arrayContaining(['eu-west-1', 'eu-central-1', 'eusc-de-east-1']));
    for (const region of regionNames) {
      const info = RegionInfo.get(region);
      expect(koerierRegions[region].partition, region).toBe(info.partition);
      expect(paramsAndSecretsLayerArn(region), region).toBe(
        info.paramsAndSecretsLambdaLayerArn(PARAMS_AND_SECRETS_VERSION, 'arm64'),
      );
    }
    // The sovereign cloud: its own partition and URL suffix, and no published arm64 layer of the extension.
    expect(koerierRegions['eusc-de-east-1'].partition).toBe('aws-eusc');
    expect(RegionInfo.get('eusc-de-east-1').domainSuffix).toBe('amazonaws.eu');
    expect(paramsAndSecretsLayerArn('eusc-de-east-1')).toBeUndefined();
    expect(paramsAndSecretsLayerArn('eu-west-1')).toBe(
      'arn:aws:lambda:eu-west-1:015030872274:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:4',
    );
    expect(paramsAndSecretsLayerArn('us-east-1')).toBeUndefined();
  });

  it('CARD-2: lib/ hard-codes no partition and no URL suffix: arn:aws: and amazonaws.com appear only in the examples of four validation messages', () => {
    const libFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? libFiles(path.join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [path.join(dir, entry.name)]
            : [],
      );
    const hits = libFiles(path.join(REPO_ROOT, 'lib')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.includes('arn:aws:') || line.includes('amazonaws.com'))
        .map((line) => `${path.relative(REPO_ROOT, file)}: ${line.trim()}`),
    );
    // Each names the commercial partition after "e.g.", as one example of a value whose validation accepts every partition.
    expect(hits.sort()).toEqual([
      'lib/constructs/disaster-recovery.ts: \'koerier:bucketReplicas must be an object, e.g. {"archive": {"bucket": "arn:aws:s3:::…", "kmsKey": "arn:aws:kms:…"}}\',',
      "lib/protection-config.ts: 'must be the ARN of a CLOUDFRONT-scope WAFv2 web ACL, which lives in us-east-1, e.g. arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>',",
      'lib/trust-config.ts: `${trustContextKey.clientCertificateSecretArn} must be a Secrets Manager secret ARN, e.g. arn:aws:secretsmanager:eu-central-1:123456789012:secret:koerier/mtls-AbCdEf`,',
      'lib/trust-config.ts: `${trustContextKey.signingKeys} must list KMS key ARNs and/or "stack", newest first, e.g. ["arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab","stack"]`,',
    ]);
  });
});

describe('issue 27: the synth refuses, in one line, a region or a setting the table cannot carry', () => {
  it('CARD-2: a region outside the table is refused, naming it and every supported region', () => {
    expect(refusal('us-east-1', {})).toBe(`Koerier does not deploy to region us-east-1: ${UNSUPPORTED}`);
    expect(refusal('cn-north-1', {})).toBe(`Koerier does not deploy to region cn-north-1: ${UNSUPPORTED}`);
  });

  it("CARD-2: bin/koerier.ts, run as cdk runs it in us-east-1 (the CLI's region when the profile names none), prints that one line and exits 1", () => {
    const out = mkdtempSync(path.join(tmpdir(), 'koerier-region-'));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bin/koerier.ts')], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify({ ...synthContext, 'aws:cdk:bundling-stacks': [] }),
          CDK_OUTDIR: out,
          CDK_DEFAULT_ACCOUNT: TEST_ACCOUNT,
          CDK_DEFAULT_REGION: 'us-east-1',
        },
        encoding: 'utf8',
        timeout: 200_000,
      });
      expect(run.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))).toEqual([
        `Koerier does not deploy to region us-east-1: ${UNSUPPORTED}`,
      ]);
      expect(run.status).toBe(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);

  it('CARD-2: in eusc-de-east-1, where AWS publishes no arm64 layer of the Parameters and Secrets extension, a client certificate is refused; without one the stack synthesises', () => {
    const secret = `arn:aws-eusc:secretsmanager:eusc-de-east-1:${TEST_ACCOUNT}:secret:koerier/mtls-AbCdEf`;
    const message = refusal('eusc-de-east-1', { 'koerier:clientCertificateSecretArn': secret });
    expect(message).toBe(
      'Koerier cannot deploy this configuration to eusc-de-east-1: koerier:clientCertificateSecretArn needs the AWS Parameters and Secrets ' +
        'Lambda Extension, and AWS publishes no arm64 layer of it in eusc-de-east-1 (lib/regions.ts): leave the client certificate out there',
    );
    expect(message).not.toContain('\n');
    expect(synthInRegion('eusc-de-east-1').template.Outputs!.Partition.Value).toBe('aws-eusc');
  });

  it("CARD-2: an ARN given in the context in another partition than the region's is refused, naming its key", () => {
    const commercialKey = `arn:aws:kms:eu-central-1:${TEST_ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;
    expect(
      refusal('eusc-de-east-1', {
        'koerier:signingKeys': [commercialKey, 'stack'],
        'koerier:powertoolsLayerArn': 'arn:aws:lambda:eu-central-1:1:layer:P:1',
      }),
    ).toBe(
      'Koerier cannot deploy this configuration to eusc-de-east-1: ' +
        `koerier:signingKeys names ${commercialKey}, of partition aws, but eusc-de-east-1 is in partition aws-eusc; ` +
        'koerier:powertoolsLayerArn names arn:aws:lambda:eu-central-1:1:layer:P:1, of partition aws, but eusc-de-east-1 is in partition aws-eusc',
    );
    expect(
      refusal('eu-west-1', {
        'koerier:signingKeys': [
          `arn:aws-eusc:kms:eusc-de-east-1:${TEST_ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`,
        ],
      }),
    ).toMatch(
      /^Koerier cannot deploy this configuration to eu-west-1: koerier:signingKeys names arn:aws-eusc:kms:\S+, of partition aws-eusc, but eu-west-1 is in partition aws$/,
    );
  });

  it("CARD-2: the CloudFront edge is refused in eusc-de-east-1, whose partition's web ACL region the table does not know", () => {
    expect(
      refusal('eusc-de-east-1', {
        'koerier:edgeProtection': 'cloudfront-waf',
        'koerier:allowCloudFrontDefaultCertificate': true,
      }),
    ).toBe(
      'Koerier cannot deploy this configuration to eusc-de-east-1: koerier:edgeProtection "cloudfront-waf" needs the region of partition ' +
        `aws-eusc's CloudFront web ACLs, which lib/regions.ts does not know: use "none" in eusc-de-east-1`,
    );
  });
});

describe("issue 27: every ARN a template builds carries its region's partition", () => {
  it.each([
    ['eu-west-1', 'aws'],
    ['eu-central-1', 'aws'],
    ['eusc-de-east-1', 'aws-eusc'],
  ] as const)(
    'CARD-2: %s: with every option the region allows, each ARN is in partition %s, and no host is named under amazonaws.com but in its partition',
    (region, partition) => {
      const { stack, template } = synthInRegion(region, everyOption(region));
      const templates: TemplateJson[] = [
        template,
        ...(stack.edgeStack ? [Template.fromStack(stack.edgeStack).toJSON() as TemplateJson] : []),
      ];
      const arns = templates.flatMap((t) => arnPartitions(t, pseudoParameters(region)));
      // Literal ARNs and ARNs joined from the partition and resources' names alike.
      expect(arns.length).toBeGreaterThan(10);
      expect(arns.filter((found) => found.partition !== partition)).toEqual([]);
      expect(template.Outputs!.Partition.Value).toBe(partition);

      const hosts = templates.flatMap((t) => amazonawsComHosts(t, pseudoParameters(region)));
      if (partition === 'aws') {
        // The extension layer comes from the table; the API's host behind CloudFront is built from the URL suffix (so the search sees hosts).
        expect(layersOf(template)).toContain(paramsAndSecretsLayerArn(region));
        expect(hosts.some((host) => host.includes(`.execute-api.${region}.amazonaws.com`))).toBe(true);
      } else {
        expect(layersOf(template)).toEqual([]);
        expect(hosts).toEqual([]);
      }
    },
    120_000,
  );

  it('CARD-2: with no region known at synth, no ARN names a partition, and the table travels as the mapping the Partition output and the extension layer read', () => {
    const secret = `arn:aws:secretsmanager:eu-central-1:${TEST_ACCOUNT}:secret:koerier/mtls-AbCdEf`;
    const { template } = synthInRegion(undefined, { 'koerier:clientCertificateSecretArn': secret });
    // A partition that is no partition: whatever it becomes in an ARN came from AWS::Partition.
    const agnostic = { 'AWS::Partition': 'FROM-AWS-PARTITION', 'AWS::URLSuffix': 'FROM-AWS-URLSUFFIX' };
    const named = arnPartitions(template.Resources, agnostic).filter(
      (found) => found.arn !== secret && found.partition !== 'FROM-AWS-PARTITION',
    );
    expect(named).toEqual([]);
    expect(template.Mappings!.KoerierRegions).toEqual(
      Object.fromEntries(
        regionNames.map((region) => {
          const layer = paramsAndSecretsLayerArn(region);
          return [
            region,
            { partition: koerierRegions[region].partition, ...(layer ? { paramsAndSecretsArm64: layer } : {}) },
          ];
        }),
      ),
    );
    const inRegionTable = (key: string) => ({ 'Fn::FindInMap': ['KoerierRegions', { Ref: 'AWS::Region' }, key] });
    expect(template.Outputs!.Partition.Value).toEqual(inRegionTable('partition'));
    // eusc-de-east-1 has no layer key: CloudFormation refuses the lookup there before creating anything.
    expect(new Set(layersOf(template).map((layer) => JSON.stringify(layer)))).toEqual(
      new Set([JSON.stringify(inRegionTable('paramsAndSecretsArm64'))]),
    );
  }, 120_000);
});
