/**
 * The delivery bench's floor of the same calls (issue 15): what the laptop allows a handler that
 * makes the calls Koerier's delivery function makes, and nothing else. On this machine the
 * emulators (dynalite, the SQS emulator) and the receivers run on the bench's own thread, so a
 * floor that leaves out the DynamoDB requests, or the POSTs, is not one Koerier can be held to.
 *
 * - The DynamoDB requests are not written down by hand: `DynamoDbCallRecorder` sees each request
 *   the delivery function sends while it drains, and the floor sends the same ones again (same
 *   operation, same input, so the same items and sizes), as often per message as Koerier did.
 * - The POSTs carry the same body bytes and the headers Koerier sent to that receiver, through a
 *   keep-alive node:https Agent shaped as functions/net/safe-http-client.ts shapes its own.
 */
import { Agent, request } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { observeCalls } from '../../functions/aws/aws-request-observer.js';

type Input = Readonly<Record<string, unknown>>;
/** An item as a write request carries it: attribute name to DynamoDB value. */
export type WrittenItem = Record<string, { S?: string } & Record<string, unknown>>;

/** Any DynamoDB command the client sends. */
export type DynamoDbCommand = Parameters<DynamoDBClient['send']>[0];

// Each command class takes its own input type; the floor sends back inputs it recorded from the same class.
const COMMANDS = {
  BatchGetItem: BatchGetItemCommand,
  BatchWriteItem: BatchWriteItemCommand,
  DeleteItem: DeleteItemCommand,
  GetItem: GetItemCommand,
  PutItem: PutItemCommand,
  Query: QueryCommand,
  Scan: ScanCommand,
  UpdateItem: UpdateItemCommand,
} as unknown as Record<string, new (input: Input) => DynamoDbCommand>;

/** Koerier reads a batch's state before it sends and writes what happened after: the floor keeps that order. */
const READS = new Set(['BatchGetItem', 'GetItem', 'Query', 'Scan']);

/** Every DynamoDB request a client sends while `recording` is on, by operation, with its input. */
export class DynamoDbCallRecorder {
  recording = false;
  private readonly inputs = new Map<string, Input[]>();

  constructor(client: DynamoDBClient) {
    // Before the call, so a conditional write that fails is counted as the request it still is.
    observeCalls(client, {
      beforeCall: (operation, input) => {
        if (this.recording) {
          const own = this.inputs.get(operation);
          if (own) own.push(input);
          else this.inputs.set(operation, [input]);
        }
        return input as Record<string, unknown>;
      },
    });
  }

  /** Requests per message, by operation, over `messages` messages. */
  perMessage(messages: number): Record<string, number> {
    return Object.fromEntries(
      [...this.inputs]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([operation, inputs]) => [operation, inputs.length / messages]),
    );
  }

  /**
   * What the floor sends: each operation at Koerier's rate, cycling through the inputs Koerier sent.
   * `renewItem` gives each item a write puts a key of its own, of the same size: Koerier's writes
   * add items, and dynalite adds an item at another cost than it overwrites one.
   */
  replay(messages: number, renewItem: (item: WrittenItem) => WrittenItem = (item) => item): CallReplay {
    const plan = [...this.inputs].map(([operation, inputs]) => {
      const command = COMMANDS[operation];
      if (!command) throw new Error(`the floor does not know DynamoDB's ${operation}`);
      return { operation, command, inputs: [...inputs], rate: inputs.length / messages, owed: 0, next: 0 };
    });
    const due = (reads: boolean, count: number) => {
      const commands: DynamoDbCommand[] = [];
      for (const step of plan) {
        if (READS.has(step.operation) !== reads) continue;
        step.owed += step.rate * count;
        // The float sum may fall short of a whole request by a rounding error; one in a million is none.
        for (; step.owed >= 1 - 1e-6; step.owed--) {
          const input = step.inputs[step.next++ % step.inputs.length]!;
          commands.push(new step.command(renewedItems(step.operation, input, renewItem)));
        }
      }
      return commands;
    };
    return { readsFor: (count) => due(true, count), writesFor: (count) => due(false, count) };
  }
}

/** `input` with `renew` applied to each item it puts. */
function renewedItems(operation: string, input: Input, renew: (item: WrittenItem) => WrittenItem): Input {
  if (operation === 'PutItem') return { ...input, Item: renew(input['Item'] as WrittenItem) };
  if (operation !== 'BatchWriteItem') return input;
  const tables = input['RequestItems'] as Record<string, { PutRequest?: { Item: WrittenItem } }[]>;
  const renewed = Object.entries(tables).map(([table, writes]) => [
    table,
    writes.map((write) =>
      write.PutRequest ? { ...write, PutRequest: { ...write.PutRequest, Item: renew(write.PutRequest.Item) } } : write,
    ),
  ]);
  return { ...input, RequestItems: Object.fromEntries(renewed) };
}

export interface CallReplay {
  /** The reads owed for a batch of `count` messages (sent before its POSTs). */
  readsFor(count: number): DynamoDbCommand[];
  /** The writes owed for it (sent after). */
  writesFor(count: number): DynamoDbCommand[];
}

/** One receiver as the floor posts to it: its URL and the headers Koerier's requests to it carried. */
export interface FloorTarget {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
}

/** What Node sets itself for each request, and the key that is each delivery's own. */
const PER_REQUEST_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'idempotency-key']);

/** The headers a recorded request carried that the floor sends again as they were. */
export function replayableHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_REQUEST_HEADERS.has(name.toLowerCase())));
}

/**
 * A keep-alive https Agent as the safe client configures its own (pool size, LIFO reuse, one
 * secure context of the public roots and `ca`, built once: a `ca` option alone builds one per connection).
 */
export function floorAgent(ca: string, connectionsPerOrigin = 16): Agent {
  const secureContext = createSecureContext({ ca: [...rootCertificates, ca] });
  return new Agent({ keepAlive: true, maxSockets: connectionsPerOrigin, scheduling: 'lifo', secureContext });
}

function post(agent: Agent, target: FloorTarget, idempotencyKey: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      target.url,
      { method: 'POST', agent, headers: { ...target.headers, 'idempotency-key': idempotencyKey } },
      (response) => {
        const status = response.statusCode ?? 0;
        response.on('data', () => {});
        response.on('error', reject);
        response.on('end', () =>
          status >= 200 && status < 300 ? resolve() : reject(new Error(`the receiver answered ${status}`)),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function sendAll(dynamodb: DynamoDBClient, commands: readonly DynamoDbCommand[]): Promise<void> {
  for (const command of commands) {
    try {
      await dynamodb.send(command);
    } catch (error) {
      // A condition that no longer holds is still the request Koerier made; anything else is the floor's failure.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/**
 * The floor's function: for a batch, Koerier's reads, then each message's POST (all at once, as
 * Koerier sends a batch's deliveries), then Koerier's writes. A message names its delivery and
 * subscription; `bodies` holds each delivery's event text, so no Koerier code decodes it.
 */
export function sameCallsHandler(options: {
  readonly dynamodb: DynamoDBClient;
  readonly replay: CallReplay;
  readonly agent: Agent;
  readonly targets: ReadonlyMap<string, FloorTarget>;
  readonly bodies: ReadonlyMap<string, string>;
}): (event: { Records: readonly { body: string }[] }) => Promise<{ batchItemFailures: never[] }> {
  const { dynamodb, replay, agent, targets, bodies } = options;
  return async (event) => {
    const count = event.Records.length;
    await sendAll(dynamodb, replay.readsFor(count));
    await Promise.all(
      event.Records.map(({ body }) => {
        const { deliveryId, subscriptionId } = JSON.parse(body) as { deliveryId: string; subscriptionId: string };
        const target = targets.get(subscriptionId);
        const text = bodies.get(deliveryId);
        if (!target || text === undefined)
          throw new Error(`the floor has no target or body for delivery ${deliveryId}`);
        return post(agent, target, deliveryId, text);
      }),
    );
    await sendAll(dynamodb, replay.writesFor(count));
    return { batchItemFailures: [] };
  };
}
