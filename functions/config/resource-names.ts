/**
 * Where the tables, queues, buckets and keys are: from the variables the CDK stack and the laptop
 * host set per grant (functions/config/resources.ts `resourceEnv`). Read when asked, so a function only fails
 * for a resource it uses and was not granted.
 */
import { resourceEnv, type BucketName, type KeyName, type QueueName, type TableName } from './resources.js';
import { ConfigError, type Env } from './settings-reader.js';

export interface ResourceNames {
  table(name: TableName): string;
  queueUrl(name: QueueName): string;
  deadLetterQueueUrl(name: QueueName): string;
  bucket(name: BucketName): string;
  key(name: KeyName): string;
  /** The pull subscriptions' queues are `<prefix>-pull-<id>` (docs/PULL.md). */
  pullQueuePrefix(): string;
}

export function resourceNamesFrom(env: Env): ResourceNames {
  return {
    table: (name) => requireEnv(resourceEnv.table(name), env),
    queueUrl: (name) => requireEnv(resourceEnv.queueUrl(name), env),
    deadLetterQueueUrl: (name) => requireEnv(resourceEnv.deadLetterQueueUrl(name), env),
    bucket: (name) => requireEnv(resourceEnv.bucket(name), env),
    key: (name) => requireEnv(resourceEnv.key(name), env),
    pullQueuePrefix: () => requireEnv(resourceEnv.pullQueuePrefix, env),
  };
}

function requireEnv(name: string, env: Env): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigError(`${name} is not set: the function was deployed without this resource grant`);
  return value;
}
