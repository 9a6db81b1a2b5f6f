/**
 * The permissions check (test/infra/function-permissions-check.ts) on records written here, so
 * that it is tested without the e2e suite: a recorded call the role is not granted is missing,
 * with the line the permissions test prints; what the event source mappings and the SSE-KMS keys
 * need is added from the template; grants nothing needed are listed as unused.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { koerierResources } from '../../lib/koerier-stack.js';
import { functions } from '../../functions/config/resources.js';
import { requiredPermissions } from '../support/aws-operations.js';
import type { AwsOperationRecord } from '../support/aws-operations-recorder.js';
import { checkFunctionPermissions, describeGrant, describeNeed } from './function-permissions-check.js';
import { synthKoerier, type Synthesised } from './synth.js';

const QUEUE_URL = 'http://127.0.0.1:41234/000000000000';

/** What the recorder writes for one call. */
function recorded(
  fn: string,
  service: string,
  operation: string,
  input: Record<string, unknown>,
): AwsOperationRecord[] {
  return requiredPermissions(service, operation, input).map(({ action, resource }) => ({
    function: fn,
    service,
    operation,
    action,
    resource,
    testFile: 'test/e2e/example.test.ts',
  }));
}

let stack: Synthesised;
beforeAll(() => {
  stack = synthKoerier();
});

describe('the permissions check (issue 27 §2)', () => {
  it('CARD-2: a call granted to the role is not missing; the same call with the grant removed from functions/config/resources.ts is, named function: action on resource', () => {
    const records = recorded('pull', 'DynamoDB', 'GetItem', { TableName: 'koerier-subscriptions', Key: {} });
    expect(checkFunctionPermissions(stack, records).missing).toEqual([]);

    const { subscriptions: _removed, ...tables } = functions.pull.tables;
    const without = synthKoerier({
      resources: { ...koerierResources, functions: { ...functions, pull: { ...functions.pull, tables } } },
    });
    expect(checkFunctionPermissions(without, records).missing.map(describeNeed)).toEqual([
      'pull: dynamodb:GetItem on dynamodb table/koerier-subscriptions (for DynamoDB:GetItem; seen in test/e2e/example.test.ts)',
    ]);
  });

  it("CARD-2: a queue-triggered function needs its event source mapping's receive, delete and queue attributes on its trigger queue, and has them", () => {
    const check = checkFunctionPermissions(stack, []);
    const router = check.needs.get('router')!;
    expect(router.map(describeGrant)).toEqual([
      'router: sqs:ReceiveMessage on sqs koerier-inbound',
      'router: sqs:DeleteMessage on sqs koerier-inbound',
      'router: sqs:GetQueueAttributes on sqs koerier-inbound',
    ]);
    expect(router[0]!.because).toEqual(['event source mapping']);
    expect(check.needs.get('delivery')!.map((wanted) => wanted.resource)).toEqual(
      Array(3).fill('arn:aws:sqs:eu-west-1:000000000000:koerier-deliveries'),
    );
    expect(check.needs.get('replayWorker')!.map((wanted) => wanted.resource)).toEqual(
      Array(3).fill('arn:aws:sqs:eu-west-1:000000000000:koerier-replays'),
    );
    expect(check.missing).toEqual([]);
    expect(check.unrecordedFunctions).not.toContain('router');
    expect(check.unrecordedFunctions).toContain('ingest');
  });

  it("CARD-2: an upload to an SSE-KMS bucket needs kms:GenerateDataKey and a download kms:Decrypt on the bucket's key; a HEAD and an SSE-SQS queue need no key", () => {
    const records = [
      ...recorded('router', 'S3', 'PutObject', { Bucket: 'koerier-archive', Key: 'archive/2026/11/29/03/x.jsonl.gz' }),
      ...recorded('delivery', 'S3', 'GetObject', { Bucket: 'koerier-payloads', Key: 'payloads/x' }),
      ...recorded('ingest', 'S3', 'HeadObject', { Bucket: 'koerier-payloads', Key: 'uploads/x' }),
      ...recorded('ingest', 'SQS', 'SendMessageBatch', { QueueUrl: `${QUEUE_URL}/koerier-inbound` }),
    ];
    const check = checkFunctionPermissions(stack, records);
    const kms = (fn: string) =>
      check.needs
        .get(fn)!
        .filter((wanted) => wanted.action.startsWith('kms:'))
        .map(describeGrant);
    expect(kms('router')).toEqual(['router: kms:GenerateDataKey on kms key/koerier-archive-bucket']);
    expect(kms('delivery')).toEqual(['delivery: kms:Decrypt on kms key/koerier-payloads-bucket']);
    expect(kms('ingest')).toEqual([]);
    expect(check.missing).toEqual([]);
  });

  it('CARD-2: what a role allows and no call needed is listed as unused; grants of services the SDK clients do not reach are set apart', () => {
    const check = checkFunctionPermissions(
      stack,
      recorded('signingKeys', 'KMS', 'GetPublicKey', { KeyId: 'koerier-signing' }),
    );
    expect(check.needs.get('signingKeys')!.map(describeGrant)).toEqual([
      'signingKeys: kms:GetPublicKey on kms key/koerier-signing',
    ]);
    expect(check.unused.filter((grant) => grant.function === 'signingKeys')).toEqual([]);
    expect(check.unused.map(describeGrant)).toContain('partners: dynamodb:Scan on dynamodb table/koerier-partners');
    expect(check.notJudged.filter((grant) => grant.function === 'signingKeys').map((grant) => grant.action)).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
  });

  it('CARD-2: a recorded call with no IAM mapping, or of a function the stack lacks, is reported rather than passed over', () => {
    const check = checkFunctionPermissions(stack, [
      ...recorded('ingest', 'SQS', 'AddPermission', { QueueUrl: `${QUEUE_URL}/koerier-inbound` }),
      ...recorded('ghost', 'DynamoDB', 'GetItem', { TableName: 'koerier-partners' }),
    ]);
    expect(check.unmapped.map((call) => `${call.function}: ${call.action}`)).toEqual([
      'ingest: unmapped:SQS:AddPermission',
    ]);
    expect(check.unknownFunctions).toEqual(['ghost']);
  });
});
