/**
 * Each function's IAM grants as the synthesized template states them, with every resource written
 * as the ARN it would have if the stack's resources bore the laptop's names (functions/config/resources.ts
 * `localName`, test/support/aws-operations.ts `LAPTOP_ACCOUNT`): the ARNs the permissions record
 * (test/support/aws-operations-recorder.ts) writes for the calls the functions made on the laptop
 * host. So the two compare as IAM would compare them: a recorded (action, resource) is granted when
 * an Allow statement of the function's role names a matching action and a matching resource
 * pattern (`*` any run of characters, `?` one).
 *
 * Also from the template: what the event source mappings do with each queue-triggered function's
 * role, and which KMS key encrypts each table, queue and bucket (SSE), so the permissions test can
 * add what those need.
 */
import type { CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { localName } from '../../functions/config/resources.js';
import type { KoerierStack } from '../../lib/koerier-stack.js';
import { bucketArn, laptopKmsKeyArn, LAPTOP_ACCOUNT, queueArn, tableArn } from '../support/aws-operations.js';
import type { CfnResourceJson } from './synth.js';

export interface ResolvedStatement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly string[];
  readonly resources: readonly string[];
  /** Set when the statement has conditions; the permissions test refuses those it cannot judge. */
  readonly condition?: unknown;
}

/** Which ARN each CloudFormation resource of the stack's tables, queues, buckets and keys stands for on the laptop. */
export function laptopArns(stack: KoerierStack): Map<string, string> {
  const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const arns = new Map<string, string>();
  for (const [name, { table }] of stack.tables.byName) arns.set(id(table), tableArn(localName.table(name as never)));
  for (const [name, { queue, deadLetterQueue }] of stack.queues.byName) {
    arns.set(id(queue), queueArn(localName.queue(name as never)));
    arns.set(id(deadLetterQueue), queueArn(localName.deadLetterQueue(name as never)));
  }
  for (const [name, bucket] of stack.buckets.byName) {
    arns.set(id(bucket), bucketArn(localName.bucket(name as never)));
    if (bucket.encryptionKey) arns.set(id(bucket.encryptionKey), laptopKmsKeyArn(`${name}-bucket`));
  }
  for (const [name, key] of stack.keys.byName) arns.set(id(key), laptopKmsKeyArn(name));
  if (stack.signingKey) arns.set(id(stack.signingKey), laptopKmsKeyArn('signing'));
  return arns;
}

const PSEUDO_PARAMETERS: Readonly<Record<string, string>> = {
  'AWS::Partition': LAPTOP_ACCOUNT.partition,
  'AWS::Region': LAPTOP_ACCOUNT.region,
  'AWS::AccountId': LAPTOP_ACCOUNT.account,
  'AWS::URLSuffix': LAPTOP_ACCOUNT.urlSuffix,
};

/**
 * A template value as a string: pseudo parameters as the laptop's, `Fn::GetAtt <id>.Arn` as the
 * laptop ARN of that resource, `Fn::Join` joined. Anything else it cannot know stays visible as
 * `unresolved:<what>`, which matches no recorded call.
 */
export function resolveValue(value: unknown, arns: ReadonlyMap<string, string>): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return `unresolved:${JSON.stringify(value)}`;
  const record = value as Record<string, unknown>;
  if (typeof record['Ref'] === 'string') return PSEUDO_PARAMETERS[record['Ref']] ?? `unresolved:Ref:${record['Ref']}`;
  const getAtt = record['Fn::GetAtt'];
  if (Array.isArray(getAtt)) {
    const [logicalId, attribute] = getAtt as [string, string];
    return (attribute === 'Arn' ? arns.get(logicalId) : undefined) ?? `unresolved:${logicalId}.${attribute}`;
  }
  const join = record['Fn::Join'];
  if (Array.isArray(join)) {
    const [separator, parts] = join as [string, unknown[]];
    return parts.map((part) => resolveValue(part, arns)).join(separator);
  }
  return `unresolved:${JSON.stringify(value)}`;
}

const list = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value as T];

/** The statements of every policy attached to the role (its DefaultPolicy and any inline policy), resolved. */
export function roleStatements(
  stack: Stack,
  resources: Record<string, CfnResourceJson>,
  roleLogicalId: string,
  arns: ReadonlyMap<string, string>,
): ResolvedStatement[] {
  const documents: unknown[] = [];
  for (const resource of Object.values(resources)) {
    if (
      resource.Type === 'AWS::IAM::Policy' &&
      list(resource.Properties['Roles']).some((role: { Ref?: string }) => role.Ref === roleLogicalId)
    ) {
      documents.push(resource.Properties['PolicyDocument']);
    }
  }
  const role = resources[roleLogicalId];
  if (!role || role.Type !== 'AWS::IAM::Role') throw new Error(`${stack.stackName} has no role ${roleLogicalId}`);
  for (const inline of list(role.Properties['Policies'] as { PolicyDocument: unknown }[] | undefined))
    documents.push(inline.PolicyDocument);
  if (list(role.Properties['ManagedPolicyArns']).length > 0)
    throw new Error(`role ${roleLogicalId} has managed policies, which this check cannot read`);
  return documents.flatMap((document) =>
    list((document as { Statement: Record<string, unknown>[] }).Statement).map((statement) => {
      if (statement['NotAction'] !== undefined || statement['NotResource'] !== undefined) {
        throw new Error(
          `role ${roleLogicalId} has a NotAction or NotResource statement, which this check cannot judge`,
        );
      }
      return {
        effect: statement['Effect'] as 'Allow' | 'Deny',
        actions: list(statement['Action'] as string | string[]),
        resources: list(statement['Resource'] as unknown).map((value) => resolveValue(value, arns)),
        ...(statement['Condition'] === undefined ? {} : { condition: statement['Condition'] }),
      };
    }),
  );
}

/** An IAM pattern (`*`, `?`) as a regular expression; actions compare without case, as IAM does. */
export function iamPattern(pattern: string, ignoreCase = false): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, ignoreCase ? 'i' : '');
}

export const actionMatches = (pattern: string, action: string): boolean => iamPattern(pattern, true).test(action);
export const resourceMatches = (pattern: string, resource: string): boolean => iamPattern(pattern).test(resource);

/** Whether the statements allow `action` on `resource`: an Allow names both, and no Deny does. */
export function isAllowed(statements: readonly ResolvedStatement[], action: string, resource: string): boolean {
  const names = (statement: ResolvedStatement) =>
    statement.actions.some((pattern) => actionMatches(pattern, action)) &&
    statement.resources.some((pattern) => resourceMatches(pattern, resource));
  if (statements.some((statement) => statement.effect === 'Deny' && names(statement))) return false;
  return statements.some(
    (statement) => statement.effect === 'Allow' && statement.condition === undefined && names(statement),
  );
}

export interface EventSourceMapping {
  /** The logical id of the function it invokes. */
  readonly functionLogicalId: string;
  /** The queue's laptop ARN. */
  readonly queue: string;
  readonly reportsBatchItemFailures: boolean;
}

export function eventSourceMappings(
  resources: Record<string, CfnResourceJson>,
  arns: ReadonlyMap<string, string>,
): EventSourceMapping[] {
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::EventSourceMapping')
    .map((resource) => ({
      functionLogicalId: String((resource.Properties['FunctionName'] as { Ref?: string }).Ref),
      queue: resolveValue(resource.Properties['EventSourceArn'], arns),
      reportsBatchItemFailures: list(resource.Properties['FunctionResponseTypes'] as string[] | undefined).includes(
        'ReportBatchItemFailures',
      ),
    }));
}

/**
 * The customer managed KMS key that encrypts each table, queue and bucket (by laptop ARN), where
 * one does; SQS-managed, S3-managed, AWS owned and AWS managed keys ask nothing of a caller's role
 * and are left out. A table with a customer managed key is refused: what a caller needs of it is
 * not something this check knows.
 */
export function customerManagedSseKeys(
  resources: Record<string, CfnResourceJson>,
  arns: ReadonlyMap<string, string>,
): Map<string, string> {
  const keys = new Map<string, string>();
  const awsManaged = (key: string) => key.startsWith('alias/aws/') || key.includes(':alias/aws/');
  for (const [logicalId, resource] of Object.entries(resources)) {
    const arn = arns.get(logicalId);
    if (arn === undefined) continue;
    if (resource.Type === 'AWS::SQS::Queue' && resource.Properties['KmsMasterKeyId'] !== undefined) {
      const key = resolveValue(resource.Properties['KmsMasterKeyId'], arns);
      if (!awsManaged(key)) keys.set(arn, key);
    }
    if (resource.Type === 'AWS::S3::Bucket') {
      type Rule = { ServerSideEncryptionByDefault?: { SSEAlgorithm?: string; KMSMasterKeyID?: unknown } };
      for (const rule of list(
        resource.Properties['BucketEncryption']?.ServerSideEncryptionConfiguration as Rule[] | undefined,
      )) {
        const byDefault = rule.ServerSideEncryptionByDefault;
        if (byDefault?.SSEAlgorithm?.startsWith('aws:kms') && byDefault.KMSMasterKeyID !== undefined) {
          const key = resolveValue(byDefault.KMSMasterKeyID, arns);
          if (!awsManaged(key)) keys.set(arn, key);
        }
      }
    }
    if (
      resource.Type === 'AWS::DynamoDB::Table' &&
      resource.Properties['SSESpecification']?.KMSMasterKeyId !== undefined
    ) {
      throw new Error(
        `table ${arn} is encrypted with a customer managed key: say in test/support/aws-operations.ts what its callers need of it`,
      );
    }
  }
  return keys;
}
