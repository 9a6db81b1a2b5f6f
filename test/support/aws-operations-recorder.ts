/**
 * The permissions record (issue 27 §2): with `KOERIER_RECORD_AWS_OPERATIONS=<directory>` set (the
 * emulated project of vitest.config.ts sets it), every AWS SDK call a Koerier function makes in
 * this test process is recorded once per distinct (function, service, operation, IAM action,
 * resource), mapped by ./aws-operations.ts, and appended as a JSON line to
 * `<directory>/<run>/operations-<pid>.jsonl` (the run: ./aws-operations-global.ts) as soon as it
 * is first seen, rather than when a host stops: a test process that ends without stopping its
 * hosts, or is killed, has still written all it saw. Distinct calls
 * are few (tens per test file), so the writes are too. test/infra/function-permissions.test.ts
 * reads the record after the emulated project has run.
 *
 * Which function made a call: the work of an invocation runs inside `invocation(name, …)` (the
 * laptop host's `aroundInvocation` hook, the handler harnesses' invoke), and an AsyncLocalStorage
 * carries the name to the SDK middleware of functions/aws/aws-request-observer.ts on the clients
 * the functions send with, as bench/support/aws-usage.ts does for the cost benchmark. A call made
 * outside any invocation (the host's own chores: recreating pull queues on start; the test's own
 * look-ups through the same clients) belongs to no function and is not recorded.
 *
 * One recorder per process, shared by every host of the process: a test file with two hosts
 * appends to one file.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { expect } from 'vitest';
import { observeCalls, type ObservableClient } from '../../functions/aws/aws-request-observer.js';
import type { KoerierHost, KoerierHostOptions } from '../../local/host.js';
import { REPOSITORY_ROOT } from '../../local/lambda-runtime.js';
import { requiredPermissions } from './aws-operations.js';

/** Where the record goes; unset, nothing is recorded. */
export const RECORD_AWS_OPERATIONS_ENV = 'KOERIER_RECORD_AWS_OPERATIONS';
/** The run the record is of (a folder under it), set by the emulated project's global setup (./aws-operations-global.ts). */
export const AWS_OPERATIONS_RUN_ENV = 'KOERIER_AWS_OPERATIONS_RUN';
/** The folder of calls recorded outside a vitest run that set one (a test process started by hand with the variable). */
export const OUTSIDE_A_RUN = 'outside-a-run';

/** One line of the record. */
export interface AwsOperationRecord {
  /** The function of functions/config/resources.ts whose invocation made the call. */
  readonly function: string;
  /** The SDK's service id: DynamoDB, SQS, S3, KMS. */
  readonly service: string;
  readonly operation: string;
  readonly action: string;
  readonly resource: string;
  /** What the call asked of the resource's encryption, where it chooses it (CreateQueue: `sqs-managed`, `kms:<key>` or `none`). */
  readonly encryption?: string;
  /** The test file that first made it (relative to the repository). */
  readonly testFile?: string;
}

export interface AwsOperationsRecorder {
  /** Runs `work` as an invocation of `functionName`: the SDK calls it makes, however deep, are that function's. */
  invocation<T>(functionName: string, work: () => Promise<T>): Promise<T>;
  /** The laptop host's `aroundInvocation` option. */
  aroundInvocation(functionName: string, event: unknown, invoke: () => Promise<unknown>): Promise<unknown>;
  /** Records the calls made with this client (once per client, however often it is asked). */
  watch(client: ObservableClient): void;
}

let recorder: AwsOperationsRecorder | undefined;

/** This process's recorder, or undefined when `KOERIER_RECORD_AWS_OPERATIONS` is not set. */
export function awsOperationsRecorder(): AwsOperationsRecorder | undefined {
  const directory = process.env[RECORD_AWS_OPERATIONS_ENV];
  if (!directory) return undefined;
  return (recorder ??= createRecorder(join(resolve(directory), process.env[AWS_OPERATIONS_RUN_ENV] ?? OUTSIDE_A_RUN)));
}

function createRecorder(directory: string): AwsOperationsRecorder {
  const current = new AsyncLocalStorage<string>();
  const seen = new Set<string>();
  const watched = new WeakSet<ObservableClient>();
  const file = join(directory, `operations-${process.pid}.jsonl`);

  const record = (service: string, operation: string, input: Record<string, unknown>) => {
    const functionName = current.getStore();
    if (functionName === undefined) return;
    const encryption = service === 'SQS' && operation === 'CreateQueue' ? queueEncryption(input) : undefined;
    for (const { action, resource } of requiredPermissions(service, operation, input)) {
      const key = JSON.stringify([functionName, service, operation, action, resource, encryption]);
      if (seen.has(key)) continue;
      seen.add(key);
      const testFile = currentTestFile();
      const line: AwsOperationRecord = {
        function: functionName,
        service,
        operation,
        action,
        resource,
        ...(encryption === undefined ? {} : { encryption }),
        ...(testFile === undefined ? {} : { testFile }),
      };
      mkdirSync(directory, { recursive: true });
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    }
  };

  return {
    invocation: (functionName, work) => current.run(functionName, work),
    aroundInvocation: (functionName, _event, invoke) => current.run(functionName, invoke),
    watch(client) {
      if (watched.has(client)) return;
      watched.add(client);
      const service = client.config.serviceId;
      observeCalls(client, {
        beforeCall: (operation, input) => {
          // Recording must never change or break the call it watches.
          try {
            record(service, operation, input);
          } catch {
            // A mapping that throws shows as a missing record, which the permissions test reports.
          }
        },
      });
    },
  };
}

/** How a CreateQueue call encrypts the queue it makes: SQS-managed keys, a KMS key, or not at all. */
function queueEncryption(input: Record<string, unknown>): string {
  const attributes = (input['Attributes'] ?? {}) as Record<string, string | undefined>;
  if (attributes['KmsMasterKeyId']) return `kms:${attributes['KmsMasterKeyId']}`;
  return attributes['SqsManagedSseEnabled'] === 'false' ? 'none' : 'sqs-managed';
}

function currentTestFile(): string | undefined {
  try {
    const path = expect.getState().testPath;
    return path ? relative(REPOSITORY_ROOT, path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a test that starts `startKoerierHost` itself adds to record its host: the invocation hook
 * and the KMS client wrapped so it is watched (`options` is returned unchanged when not recording),
 * and, once the host runs, `watchHost(host)`.
 */
export function withAwsOperationsRecording<T extends Pick<KoerierHostOptions, 'aroundInvocation' | 'kms'>>(
  options: T,
): T {
  const active = awsOperationsRecorder();
  if (!active) return options;
  const around = options.aroundInvocation;
  const kms = options.kms;
  return {
    ...options,
    aroundInvocation: (functionName: string, event: unknown, invoke: () => Promise<unknown>) =>
      active.aroundInvocation(functionName, event, around ? () => around(functionName, event, invoke) : invoke),
    ...(kms
      ? {
          kms: () => {
            const client = kms();
            active.watch(client);
            return client;
          },
        }
      : {}),
  };
}

/** Records the calls the host's functions make with their DynamoDB, SQS and S3 clients (each function's own, with `functionContainers`). */
export function watchHost(host: Pick<KoerierHost, 'awsClients' | 'functionAwsClients'>): void {
  const active = awsOperationsRecorder();
  if (!active) return;
  for (const clients of [host.awsClients, ...host.functionAwsClients.values()]) {
    for (const client of [clients.dynamodb, clients.sqs, clients.s3]) active.watch(client);
  }
}

/**
 * `handler`, a Lambda handler export run on this process's container clients
 * (functions/composition/lambda-dependencies.ts) by a handler harness, with its calls recorded as
 * `functionName`'s: the harnesses of test/support/handler-harness.ts and
 * test/integration/delivery-harness.ts, which run one function as Lambda composes it. Unchanged when
 * not recording, or when the function is not known (`undefined`).
 */
export function recordedLambdaHandler<H extends (...args: never[]) => Promise<unknown>>(
  functionName: string | undefined,
  handler: H,
): H {
  const active = awsOperationsRecorder();
  if (!active || functionName === undefined) return handler;
  return (async (...args: Parameters<H>) => {
    const { containerClients } = await import('../../functions/composition/lambda-dependencies.js');
    const clients = containerClients();
    for (const client of [clients.dynamodb, clients.sqs, clients.s3]) active.watch(client);
    return active.invocation(functionName, () => handler(...args));
  }) as H;
}
