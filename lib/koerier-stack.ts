/**
 * Koerier's AWS stack, generated from lib/resources.ts: every table, queue, bucket, key, function
 * and route described there appears here without touching the constructs.
 */
import { fileURLToPath } from 'node:url';
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Buckets } from './constructs/buckets.js';
import { DeadLetterAlarms } from './constructs/dead-letter-alarms.js';
import { DeliveryAlarms } from './constructs/delivery-alarms.js';
import { KoerierHttpApi } from './constructs/http-api.js';
import { KoerierFunction } from './constructs/koerier-function.js';
import { Keys } from './constructs/keys.js';
import { Queues } from './constructs/queues.js';
import { Tables } from './constructs/tables.js';
import * as resources from './resources.js';
import { settingEnvironment, type StackConfig } from './stack-config.js';

/** The shape of lib/resources.ts, with names widened so tests can describe more. */
export interface ResourceDescription {
  readonly tables: Readonly<Record<string, resources.TableSpec>>;
  readonly queues: Readonly<Record<string, resources.QueueSpec>>;
  readonly buckets: Readonly<Record<string, object>>;
  readonly keys: Readonly<Record<string, object>>;
  readonly functions: Readonly<Record<string, resources.FunctionSpec>>;
}

export const koerierResources: ResourceDescription = {
  tables: resources.tables,
  queues: resources.queues,
  buckets: resources.buckets,
  keys: resources.keys,
  functions: resources.functions,
};

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface KoerierStackProps extends StackProps {
  readonly config: StackConfig;
  /** @default lib/resources.ts */
  readonly resources?: ResourceDescription;
}

export class KoerierStack extends Stack {
  readonly tables: Tables;
  readonly queues: Queues;
  readonly buckets: Buckets;
  readonly keys: Keys;
  readonly httpApi: KoerierHttpApi;
  readonly functions: ReadonlyMap<string, KoerierFunction>;
  readonly alarms: DeadLetterAlarms;
  /** Present when the description has the `delivery` function, whose metrics they watch. */
  readonly deliveryAlarms: DeliveryAlarms | undefined;

  constructor(scope: Construct, id: string, props: KoerierStackProps) {
    super(scope, id, { description: 'Koerier: CloudEvents gateway (NL GOV and Edukoppeling profiles)', ...props });
    const description = props.resources ?? koerierResources;

    this.tables = new Tables(this, 'Tables', description.tables);
    this.queues = new Queues(this, 'Queues', description.queues);
    this.buckets = new Buckets(this, 'Buckets', description.buckets);
    this.keys = new Keys(this, 'Keys', description.keys);
    this.alarms = new DeadLetterAlarms(this, 'DeadLetterAlarms', {
      deadLetterQueues: new Map([...this.queues.byName].map(([name, pair]) => [name, pair.deadLetterQueue])),
      ...(props.config.alarmEmail === undefined ? {} : { email: props.config.alarmEmail }),
    });

    this.httpApi = new KoerierHttpApi(this, 'Http');
    const settings = settingEnvironment(props.config, this.httpApi.url);
    const functionResources = {
      tables: this.tables.byName,
      queues: this.queues.byName,
      buckets: this.buckets.byName,
      keys: this.keys.byName,
    };
    const functions = new Map<string, KoerierFunction>();
    for (const [name, spec] of Object.entries(description.functions)) {
      const fn = new KoerierFunction(this, name, { spec, resources: functionResources, settings, repoRoot: REPO_ROOT });
      this.httpApi.addFunction(name, fn.function, spec);
      functions.set(name, fn);
    }
    this.functions = functions;
    this.deliveryAlarms = functions.has('delivery') ? new DeliveryAlarms(this, 'DeliveryAlarms', { topic: this.alarms.topic }) : undefined;

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the Koerier API', value: this.httpApi.url });
    for (const [name, { queue, deadLetterQueue }] of this.queues.byName) {
      new CfnOutput(this, `${name}QueueUrl`, { description: `URL of queue ${name}`, value: queue.queueUrl });
      new CfnOutput(this, `${name}DeadLetterQueueUrl`, { description: `URL of queue ${name}-dlq`, value: deadLetterQueue.queueUrl });
    }
  }
}
