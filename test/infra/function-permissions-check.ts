/**
 * Holds each function's IAM role, as the synthesized template grants it, to what the function was
 * recorded doing in the e2e suite (test/support/aws-operations-recorder.ts), plus what the stack's
 * own configuration makes the role need: its event source mapping's receives and deletes, and the
 * KMS key of an SSE-KMS queue or bucket it uses. A call the role would not be allowed is
 * `missing` (AccessDenied on AWS); an allowed (action, resource) no call needed is `unused`
 * (least privilege: listed, not failed). Used by test/infra/function-permissions.test.ts.
 */
import { localName } from '../../functions/config/resources.js';
import { pullQueuePrefixOf } from '../../lib/koerier-stack.js';
import { EVENT_SOURCE_MAPPING_ACTIONS, kmsKeyArn, sseKmsActions } from '../support/aws-operations.js';
import type { AwsOperationRecord } from '../support/aws-operations-recorder.js';
import {
  actionMatches,
  customerManagedSseKeys,
  eventSourceMappings,
  isAllowed,
  laptopArns,
  resourceMatches,
  roleStatements,
  type ResolvedStatement,
} from './function-grants.js';
import type { Synthesised } from './synth.js';

/** The services the functions reach through the SDK clients the record watches; grants of others (logs, X-Ray, Secrets Manager, EC2) are not judged here. */
export const RECORDED_SERVICES = ['dynamodb', 'sqs', 's3', 'kms'] as const;

export interface Need {
  readonly function: string;
  readonly action: string;
  readonly resource: string;
  /** What needs it: the recorded calls (`SQS:SendMessageBatch`), the event source mapping, an SSE-KMS key. */
  readonly because: readonly string[];
  /** The test files whose calls needed it. */
  readonly seenIn: readonly string[];
}

export interface Grant {
  readonly function: string;
  readonly action: string;
  readonly resource: string;
}

export interface PermissionCheck {
  /** What a function needs and its role does not allow. */
  readonly missing: readonly Need[];
  /** What a role allows and nothing recorded needed, for the recorded services. */
  readonly unused: readonly Grant[];
  /** Grants of services the record does not watch. */
  readonly notJudged: readonly Grant[];
  /** Calls ./aws-operations.ts has no IAM mapping for. */
  readonly unmapped: readonly AwsOperationRecord[];
  /** Functions in the record that the stack does not have. */
  readonly unknownFunctions: readonly string[];
  /** Functions of the stack with no recorded call and no event source mapping. */
  readonly unrecordedFunctions: readonly string[];
  /** Everything needed, per function. */
  readonly needs: ReadonlyMap<string, readonly Need[]>;
}

export function checkFunctionPermissions(
  { stack, resources }: Synthesised,
  records: readonly AwsOperationRecord[],
): PermissionCheck {
  const arns = laptopArns(stack);
  const sseKeys = customerManagedSseKeys(resources, arns);
  // The laptop's pull queues are `koerier-pull-…`; the stack's `<its prefix>-pull-…`.
  const laptopPull = `:${localName.pullQueuePrefix}-pull-`;
  const stackPull = `:${pullQueuePrefixOf(stack.stackName)}-pull-`;
  const inStack = (resource: string) =>
    resource.startsWith('arn:aws:sqs:') ? resource.replace(laptopPull, stackPull) : resource;

  const needs = new Map<
    string,
    Map<string, { action: string; resource: string; because: Set<string>; seenIn: Set<string> }>
  >();
  const need = (fn: string, action: string, resource: string, because: string, seenIn?: string) => {
    const ofFunction = needs.get(fn) ?? new Map();
    needs.set(fn, ofFunction);
    const key = `${action} ${resource}`;
    const entry = ofFunction.get(key) ?? { action, resource, because: new Set<string>(), seenIn: new Set<string>() };
    ofFunction.set(key, entry);
    entry.because.add(because);
    if (seenIn) entry.seenIn.add(seenIn);
  };

  // Pull queues are made at run time: their encryption is what the CreateQueue asked for.
  for (const record of records) {
    if (record.operation !== 'CreateQueue' || !record.encryption?.startsWith('kms:')) continue;
    const key = record.encryption.slice('kms:'.length);
    if (!key.startsWith('alias/aws/')) sseKeys.set(inStack(record.resource), kmsKeyArn(key));
  }

  const unmapped: AwsOperationRecord[] = [];
  const unknownFunctions = new Set<string>();
  for (const record of records) {
    if (!stack.functions.has(record.function)) {
      unknownFunctions.add(record.function);
      continue;
    }
    if (record.action.startsWith('unmapped:') || record.resource.startsWith('unknown')) {
      unmapped.push(record);
      continue;
    }
    const resource = inStack(record.resource);
    need(record.function, record.action, resource, `${record.service}:${record.operation}`, record.testFile);
    // SSE-KMS: a queue by its ARN, a bucket by the part of the object ARN before the key.
    const encrypted = record.service === 'S3' ? resource.split('/')[0]! : resource;
    const key = sseKeys.get(encrypted);
    if (key) {
      for (const action of sseKmsActions(record.service, record.operation)) {
        need(
          record.function,
          action,
          key,
          `SSE-KMS of ${describeArn(encrypted)} (${record.service}:${record.operation})`,
          record.testFile,
        );
      }
    }
  }

  const functionByLogicalId = new Map(
    [...stack.functions].map(([name, fn]) => [logicalIdOf(stack, fn.function), name]),
  );
  const mapped = new Set<string>();
  for (const mapping of eventSourceMappings(resources, arns)) {
    const fn = functionByLogicalId.get(mapping.functionLogicalId);
    if (!fn)
      throw new Error(
        `an event source mapping invokes ${mapping.functionLogicalId}, which is no function of functions/config/resources.ts`,
      );
    mapped.add(fn);
    for (const action of EVENT_SOURCE_MAPPING_ACTIONS) need(fn, action, mapping.queue, 'event source mapping');
    const key = sseKeys.get(mapping.queue);
    if (key) need(fn, 'kms:Decrypt', key, `SSE-KMS of ${describeArn(mapping.queue)} (event source mapping)`);
  }

  const missing: Need[] = [];
  const unused: Grant[] = [];
  const notJudged: Grant[] = [];
  const needsByFunction = new Map<string, Need[]>();
  for (const [name, fn] of stack.functions) {
    const statements = roleStatements(stack, resources, logicalIdOf(stack, fn.role), arns);
    const needed: Need[] = [...(needs.get(name)?.values() ?? [])].map((entry) => ({
      function: name,
      action: entry.action,
      resource: entry.resource,
      because: [...entry.because].sort(),
      seenIn: [...entry.seenIn].sort(),
    }));
    needsByFunction.set(name, needed);
    for (const wanted of needed) if (!isAllowed(statements, wanted.action, wanted.resource)) missing.push(wanted);
    for (const grant of allowedPairs(name, statements)) {
      const service = grant.action.split(':')[0]!.toLowerCase();
      if (!(RECORDED_SERVICES as readonly string[]).includes(service)) {
        notJudged.push(grant);
        continue;
      }
      const used = needed.some(
        (wanted) => actionMatches(grant.action, wanted.action) && resourceMatches(grant.resource, wanted.resource),
      );
      if (!used) unused.push(grant);
    }
  }

  return {
    missing,
    unused,
    notJudged,
    unmapped,
    unknownFunctions: [...unknownFunctions].sort(),
    unrecordedFunctions: [...stack.functions.keys()].filter((name) => !needs.has(name) && !mapped.has(name)),
    needs: needsByFunction,
  };
}

function allowedPairs(fn: string, statements: readonly ResolvedStatement[]): Grant[] {
  return statements
    .filter((statement) => statement.effect === 'Allow')
    .flatMap((statement) =>
      statement.actions.flatMap((action) =>
        statement.resources.map((resource) => ({ function: fn, action, resource })),
      ),
    );
}

function logicalIdOf(stack: Synthesised['stack'], construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

/** An ARN of the laptop's account without what every one of them shares: `dynamodb table/koerier-routes`, `sqs koerier-inbound`. */
export function describeArn(arn: string): string {
  const match = /^arn:[^:]+:([^:]+):[^:]*:[^:]*:(.*)$/.exec(arn);
  return match ? `${match[1]} ${match[2]}` : arn;
}

/** `router: dynamodb:Scan on dynamodb table/koerier-routes`. */
export function describeGrant(grant: Grant): string {
  return `${grant.function}: ${grant.action} on ${describeArn(grant.resource)}`;
}

/** What the report says of one missing grant: the line, then what needed it and where it was seen. */
export function describeNeed(wanted: Need): string {
  const where =
    wanted.seenIn.length > 0
      ? `; seen in ${wanted.seenIn.slice(0, 3).join(', ')}${wanted.seenIn.length > 3 ? ', …' : ''}`
      : '';
  return `${describeGrant(wanted)} (for ${wanted.because.join(', ')}${where})`;
}
