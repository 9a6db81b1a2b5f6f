/**
 * The one description of Koerier's resources: tables, queues, buckets, keys, functions with
 * their triggers, routes and grants. The CDK constructs (lib/) and the laptop host (local/) both
 * read it, so what runs on a laptop cannot drift from what is deployed.
 *
 * Plain data only: no aws-cdk-lib import here, the laptop host loads this file too.
 */

import { API_BASE_PATH } from '../core/http/api-version.js';
import { functions, type FunctionName } from './function-specs.js';
import type { BucketName, FunctionSpec, KeyName, QueueName, RouteSpec, TableName } from './resource-specs.js';

export { API_BASE_PATH };
export * from './resource-specs.js';
export * from './function-specs.js';

/** Every route of the API in the order written above: the laptop gateway and the `$default` answer match requests with it. */
export const routeTable: readonly (RouteSpec & { readonly function: FunctionName })[] = (
  Object.entries(functions) as [FunctionName, FunctionSpec][]
).flatMap(([name, fn]) => (fn.routes ?? []).map((route) => ({ ...route, function: name })));

/** RFC 8615: well-known resources live at the root of the origin, outside the versioned API. */
const WELL_KNOWN_PREFIX = '/.well-known/';
/** The ZGW Notificaties API (issue 34) has its own versioned base path, as Open Notificaties serves it. */
export const ZGW_BASE_PATH = '/zgw/api/v1';

/**
 * Where a route is served: under the API's base path (`/events` at `/v1/events`, Logius API
 * Design Rules /core/uri-version), except well-known resources, at the origin's root. API Gateway
 * and the laptop gateway route these paths; the apps and the route keys above never see the base path.
 */
export function servedPath(path: string): string {
  return path.startsWith(WELL_KNOWN_PREFIX) || path.startsWith(`${ZGW_BASE_PATH}/`) ? path : `${API_BASE_PATH}${path}`;
}

/** The route key of this file (`POST /events`) for the key of a served route (`POST /v1/events`), as API Gateway reports it. */
export function routeKeyOfServed(servedRouteKey: string): string {
  const space = servedRouteKey.indexOf(' ');
  if (space < 0) return servedRouteKey; // `$default`
  const path = servedRouteKey.slice(space + 1);
  return path.startsWith(`${API_BASE_PATH}/`)
    ? `${servedRouteKey.slice(0, space)} ${path.slice(API_BASE_PATH.length)}`
    : servedRouteKey;
}

/** Environment variable names that carry resource names into the functions. */
export const resourceEnv = {
  table: (name: TableName) => `KOERIER_TABLE_${snake(name)}`,
  queueUrl: (name: QueueName) => `KOERIER_QUEUE_${snake(name)}_URL`,
  deadLetterQueueUrl: (name: QueueName) => `KOERIER_DLQ_${snake(name)}_URL`,
  bucket: (name: BucketName) => `KOERIER_BUCKET_${snake(name)}`,
  key: (name: KeyName) => `KOERIER_KEY_${snake(name)}`,
  /** Set for a function with a `pullQueues` grant. */
  pullQueuePrefix: 'KOERIER_PULL_QUEUE_PREFIX',
};

/** Physical names where Koerier chooses them (laptop host; CDK lets CloudFormation name them). */
export const localName = {
  table: (name: TableName) => `koerier-${kebab(name)}`,
  queue: (name: QueueName) => `koerier-${kebab(name)}`,
  deadLetterQueue: (name: QueueName) => `koerier-${kebab(name)}-dlq`,
  bucket: (name: BucketName) => `koerier-${kebab(name)}`,
  pullQueuePrefix: 'koerier',
};

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
