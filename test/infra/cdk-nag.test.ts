/**
 * cdk-nag's AWS Solutions rules pass with no unacknowledged error or warning, and every
 * acknowledgement has a specific reason and silences a finding that really occurs.
 */
import { Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { addComplianceChecks } from '../../lib/checks.js';
import { koerierResources, type ResourceDescription } from '../../lib/koerier-stack.js';
import { buildKoerier, newApp, synthKoerier } from './synth.js';

/** The same rules, blind to acknowledgements: what the stack would be reported for without them. */
class UnacknowledgedChecks extends AwsSolutionsChecks {}
Object.defineProperty(UnacknowledgedChecks.prototype, 'isAcknowledged', { value: () => false });

interface Acknowledgement {
  readonly path: string;
  readonly id: string;
  readonly reason: string;
}

function acknowledgementsIn(scope: ReturnType<typeof newApp>): Acknowledgement[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

/** resources.ts plus a function with a bucket grant, whose object wildcard needs its own acknowledgement. */
const withBucketGrant: ResourceDescription = {
  ...koerierResources,
  functions: {
    ...koerierResources.functions,
    extraPayloadReader: {
      entry: 'functions/handlers/api-description.ts',
      memoryMb: 256,
      timeoutSeconds: 10,
      routes: [{ method: 'GET', path: '/extra/payloads/{id}' }],
      buckets: { payloads: 'read' },
      keys: { credentials: 'decrypt' },
    },
  },
};

describe.each([
  ['lib/resources.ts', koerierResources],
  ['lib/resources.ts plus a function reading the claim-check bucket', withBucketGrant],
] as const)('cdk-nag AwsSolutions on the stack from %s', (_label, description) => {
  it('CARD-2: the checks report no unacknowledged error and no warning', () => {
    const app = newApp();
    synthKoerier({ app, resources: description });
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const findings = report.violations.map((v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(findings).toEqual([]);
  });

  it('CARD-2: every acknowledgement gives a specific reason and silences a finding that really occurs there', () => {
    const app = newApp();
    synthKoerier({ app, resources: description });
    const acknowledgements = acknowledgementsIn(app);
    expect(acknowledgements.length).toBeGreaterThan(0);
    const raw = new UnacknowledgedChecks(app).validateScope(app).violations;
    for (const ack of acknowledgements) {
      expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThanOrEqual(80);
      const silenced = raw
        .filter((v) => v.ruleName === ack.id)
        .flatMap((v) => v.violatingResources)
        .filter((r) => r.constructPath === ack.path || r.constructPath?.startsWith(`${ack.path}/`));
      expect(silenced.length, `${ack.id} at ${ack.path} acknowledges nothing`).toBeGreaterThan(0);
    }
  });
});

describe('cdk-nag on the stack from lib/resources.ts', () => {
  it('CARD-2: synthesis as `cdk synth` does it (checks registered, CloudFormation template validation on) succeeds and records the acknowledgements', () => {
    const app = newApp({}, { builtinValidation: true });
    const stack = buildKoerier(app);
    addComplianceChecks(app);
    // Under vitest the app runs in-memory, where any failing validation plugin makes synth throw.
    const assembly = app.synth();
    // The acknowledgements travel in the template as the audit trail.
    const template = assembly.getStackByName(stack.stackName).template as {
      Resources: Record<string, { Metadata?: { cdk_nag?: { rules_to_suppress: { id: string; reason: string }[] } } }>;
    };
    const audited = Object.values(template.Resources).flatMap((r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? []);
    expect(audited.map((rule) => rule.id)).toEqual(expect.arrayContaining(['AwsSolutions-APIG4', 'AwsSolutions-IAM5[Resource::*]']));
  });

  it('CARD-2: a resource breaking a rule does stop that synthesis', () => {
    const app = newApp();
    new sqs.Queue(buildKoerier(app), 'PlainQueue');
    addComplianceChecks(app);
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });

  it('CARD-2: only the reviewed rules are acknowledged', () => {
    const app = newApp();
    synthKoerier({ app });
    // A bucket's objects by their ARN pattern (`<Bucket…Arn>/*`): keys are generated per event.
    const ids = new Set(acknowledgementsIn(app).map((ack) => ack.id.replace(/^(AwsSolutions-IAM5\[Resource::<)Buckets\w+(\.Arn>\/\*\])$/, '$1Bucket$2')));
    expect(ids).toEqual(new Set(['AwsSolutions-APIG4', 'AwsSolutions-IAM5[Resource::*]', 'AwsSolutions-IAM5[Resource::<Bucket.Arn>/*]']));
  });
});
