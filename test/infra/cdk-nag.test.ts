/**
 * cdk-nag's AWS Solutions rules pass with no unacknowledged error or warning, and every
 * acknowledgement has a specific reason and silences a finding that really occurs.
 */
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { addComplianceChecks } from '../../lib/checks.js';
import { koerierResources, type ResourceDescription } from '../../lib/koerier-stack.js';
import { acknowledgementsIn, unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import { buildKoerier, newApp, synthKoerier } from './synth.js';

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
  ['functions/config/resources.ts', koerierResources],
  ['functions/config/resources.ts plus a function reading the claim-check bucket', withBucketGrant],
] as const)('cdk-nag AwsSolutions on the stack from %s', (_label, description) => {
  // One synthesis for both reviews: neither changes the app.
  let app: ReturnType<typeof newApp>;
  beforeAll(() => {
    app = newApp();
    synthKoerier({ app, resources: description });
  });

  it('CARD-2: the checks report no unacknowledged error and no warning', () => {
    expect(unacknowledgedFindings(app)).toEqual([]);
  });

  it('CARD-2: every acknowledgement gives a specific reason and silences a finding that really occurs there', () => {
    expect(acknowledgementsIn(app).length).toBeGreaterThan(0);
    expect(unjustifiedAcknowledgements(app)).toEqual([]);
  });
});

// The synthesis as `cdk synth` runs it (template validation on) is in edge-protection.test.ts, with
// edge protection off and on: CloudFormation's template validator, a 9 MB WebAssembly module,
// takes seconds to load, once per process.
describe('cdk-nag on the stack from functions/config/resources.ts', () => {
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
    const ids = new Set(
      acknowledgementsIn(app).map((ack) =>
        ack.id.replace(/^(AwsSolutions-IAM5\[Resource::<)Buckets\w+(\.Arn>\/\*\])$/, '$1Bucket$2'),
      ),
    );
    expect(ids).toEqual(
      new Set([
        'AwsSolutions-APIG4',
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Resource::<Bucket.Arn>/*]',
        // The pull subscriptions' queues, made at run time under one prefix (docs/PULL.md).
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:koerier-pull-*]',
      ]),
    );
  });
});
