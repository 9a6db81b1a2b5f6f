/**
 * Persist before acknowledge (EDU-19, EDU-IN; review #2): the ingest answers 202 only once SQS
 * holds every event. The SQS emulator and the real SDK client are used throughout; the fault is
 * injected in the middleware stack of the very client the handler sends with, so a
 * write fails, is held back, or has entries of a SendMessageBatch refused, exactly as SQS would.
 */
import { randomUUID } from 'node:crypto';
import {
  SQSServiceException,
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { containerClients } from '../../functions/composition/aws-dependencies.js';
import { logger } from '../../functions/app/logger.js';
import { startHandlerHarness, type HandlerHarness } from '../support/handler-harness.js';
import { staysQuiet } from '../support/waiting.js';
import { problemTypeUri } from '../support/problem-types.js';

let harness: HandlerHarness;
let handler: (event: never, context: never) => Promise<unknown>;
let token: string;

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';
const event = (id = randomUUID()) => ({
  specversion: '1.0',
  id,
  source: SOURCE,
  type: 'nl.edu.leerling.ingeschreven',
  data: { leerling: 'L-42' },
});

/** What the injected fault does to the next SQS calls; `none` lets them through untouched. */
type Fault =
  | { kind: 'none' }
  | { kind: 'fail' }
  | { kind: 'hold'; entered: () => void; release: Promise<void> }
  | { kind: 'refuse-entries'; eventIds: Set<string>; times: number; senderFault: boolean };

let fault: Fault = { kind: 'none' };
/** SQS operations as they happened, for ordering assertions. */
const timeline: string[] = [];
/** How often each event id was offered to SendMessageBatch. */
const offered = new Map<string, number>();

function eventIdOf(body: string | undefined): string {
  return (JSON.parse(body ?? '{}') as { id?: string }).id ?? '';
}

function installFaultInjection(): void {
  containerClients().sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = context.commandName ?? '';
      if (operation !== 'SendMessageCommand' && operation !== 'SendMessageBatchCommand') return next(args);
      const current = fault;
      if (current.kind === 'fail') {
        timeline.push(`${operation} failed`);
        throw new SQSServiceException({
          name: 'InternalError',
          $fault: 'server',
          $metadata: { httpStatusCode: 500 },
          message: 'injected: SQS is unavailable',
        });
      }
      if (current.kind === 'hold') {
        timeline.push(`${operation} held`);
        current.entered();
        await current.release;
      }
      if (current.kind === 'refuse-entries' && operation === 'SendMessageBatchCommand') {
        const input = args.input as SendMessageBatchCommandInput & {
          Entries: NonNullable<SendMessageBatchCommandInput['Entries']>;
        };
        for (const entry of input.Entries)
          offered.set(eventIdOf(entry.MessageBody), (offered.get(eventIdOf(entry.MessageBody)) ?? 0) + 1);
        const refused = input.Entries.filter(
          (entry) =>
            current.eventIds.has(eventIdOf(entry.MessageBody)) &&
            (offered.get(eventIdOf(entry.MessageBody)) ?? 0) <= current.times,
        );
        const passed = input.Entries.filter((entry) => !refused.includes(entry));
        const failed = refused.map((entry) => ({
          Id: entry.Id!,
          Code: current.senderFault ? 'InvalidParameterValue' : 'InternalError',
          SenderFault: current.senderFault,
          Message: 'injected',
        }));
        timeline.push(`${operation} refused ${refused.length} of ${input.Entries.length}`);
        if (passed.length === 0)
          return {
            output: { Successful: [], Failed: failed, $metadata: {} } satisfies SendMessageBatchCommandOutput,
            response: {},
          };
        const result = await next({ ...args, input: { ...input, Entries: passed } });
        const output = result.output as SendMessageBatchCommandOutput;
        return {
          ...result,
          output: { ...output, Failed: [...(output.Failed ?? []), ...failed] } satisfies SendMessageBatchCommandOutput,
        };
      }
      const result = await next(args);
      timeline.push(`${operation} stored`);
      return result;
    },
    { step: 'initialize', name: 'koerierTestFaultInjection' },
  );
}

function post(body: unknown, contentType: string, key = randomUUID()) {
  return harness.invoke(handler, {
    method: 'POST',
    path: '/events',
    routeKey: 'POST /events',
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': key, 'content-type': contentType },
    body: JSON.stringify(body),
  });
}

const STRUCTURED = 'application/cloudevents+json';
const BATCH = 'application/cloudevents-batch+json';

async function storedIds(): Promise<string[]> {
  return (await harness.drain('inbound')).map((message) => eventIdOf(message.Body)).sort();
}

beforeAll(async () => {
  harness = await startHandlerHarness();
  ({ handler } = (await import('../../functions/handlers/ingest.js')) as { handler: typeof handler });
  token = await harness.token('partner-a', 'events:publish');
  installFaultInjection();
});

afterEach(async () => {
  fault = { kind: 'none' };
  timeline.length = 0;
  offered.clear();
  await harness.drain('inbound');
});

afterAll(async () => {
  await harness?.stop();
});

describe('persist before acknowledge (EDU-19, EDU-IN), with faults injected into the SQS client', () => {
  it('EDU-19, EDU-IN: when SQS refuses the write the answer is a 503 problem, nothing is stored, and the retry with the same key is processed', async () => {
    const restore = logger.captureTo(() => undefined);
    const key = randomUUID();
    const accepted = event();
    try {
      fault = { kind: 'fail' };
      const refused = await post(accepted, STRUCTURED, key);
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toBe('application/problem+json');
      expect((refused.json() as { type: string }).type).toBe(problemTypeUri('events-not-stored'));
      expect(await storedIds()).toEqual([]);
    } finally {
      restore();
    }
    fault = { kind: 'none' };
    const retried = await post(accepted, STRUCTURED, key);
    expect(retried.status).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await storedIds()).toEqual([accepted.id]);
  });

  it('EDU-19, EDU-IN: a batch whose SendMessageBatch fails gets a 503, never a 202', async () => {
    const restore = logger.captureTo(() => undefined);
    try {
      fault = { kind: 'fail' };
      const response = await post([event(), event(), event()], BATCH);
      expect(response.status).toBe(503);
      expect(timeline).toEqual(['SendMessageBatchCommand failed']);
      expect(await storedIds()).toEqual([]);
    } finally {
      restore();
    }
  });

  it('EDU-19: while the SQS write is slow no answer goes out; the 202 follows the completed write', async () => {
    let entered!: () => void;
    const writeStarted = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    fault = { kind: 'hold', entered, release: new Promise<void>((resolve) => (release = resolve)) };
    const accepted = event();
    let answered = false;
    const response = post(accepted, STRUCTURED).then((r) => {
      answered = true;
      timeline.push(`answered ${r.status}`);
      return r;
    });
    await writeStarted;
    // Give the handler every chance to answer early: many turns of the event loop.
    await staysQuiet('answer before the event is stored', () => answered, 200, { intervalMs: 10 });
    release();
    expect((await response).status).toBe(202);
    expect(timeline).toEqual(['SendMessageCommand held', 'SendMessageCommand stored', 'answered 202']);
    expect(await storedIds()).toEqual([accepted.id]);
  });

  it('EDU-19: entries a SendMessageBatch refuses once are sent again, and the 202 comes when all ten are stored', async () => {
    const events = Array.from({ length: 10 }, () => event());
    const refusedOnce = new Set([events[2]!.id, events[5]!.id, events[9]!.id]);
    fault = { kind: 'refuse-entries', eventIds: refusedOnce, times: 1, senderFault: false };
    const response = await post(events, BATCH);
    expect(response.status).toBe(202);
    expect(timeline).toEqual(['SendMessageBatchCommand refused 3 of 10', 'SendMessageBatchCommand refused 0 of 3']);
    expect(await storedIds()).toEqual(events.map((e) => e.id).sort());
  });

  it('EDU-19, EDU-IN: entries that keep being refused make the request a 503, and its retry with the same key stores every event', async () => {
    const restore = logger.captureTo(() => undefined);
    const events = Array.from({ length: 10 }, () => event());
    const key = randomUUID();
    try {
      fault = {
        kind: 'refuse-entries',
        eventIds: new Set([events[0]!.id, events[7]!.id]),
        times: Number.POSITIVE_INFINITY,
        senderFault: false,
      };
      const refused = await post(events, BATCH, key);
      expect(refused.status).toBe(503);
      // The others are stored; the router drops their second copy by source + id (EDU-IDEM-15).
      expect(await storedIds()).toEqual(
        events
          .slice(1, 7)
          .concat(events.slice(8))
          .map((e) => e.id)
          .sort(),
      );
    } finally {
      restore();
    }
    fault = { kind: 'none' };
    const retried = await post(events, BATCH, key);
    expect(retried.status).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await storedIds()).toEqual(events.map((e) => e.id).sort());
  });

  it("EDU-19: entries refused as the sender's fault are not retried and the request gets a 503", async () => {
    const restore = logger.captureTo(() => undefined);
    const events = Array.from({ length: 4 }, () => event());
    try {
      fault = {
        kind: 'refuse-entries',
        eventIds: new Set([events[1]!.id]),
        times: Number.POSITIVE_INFINITY,
        senderFault: true,
      };
      expect((await post(events, BATCH)).status).toBe(503);
      expect(offered.get(events[1]!.id)).toBe(1);
    } finally {
      restore();
    }
  });
});
