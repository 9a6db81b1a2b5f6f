/**
 * At-least-once for pull under a crash (EDU-17, EDU-IDEM-2, docs/PULL.md): 1,000 events wait in a
 * pull subscription's queue; a consumer (test/e2e/pull-crash-consumer.ts, a child process)
 * receives them with a 10 s lock and acknowledges, and is killed with SIGKILL in the middle. A
 * second consumer then receives and acknowledges the rest. None is lost: what the killed consumer
 * held unacknowledged comes back once its lock has run out, its delivery count raised and its
 * delivery key the same.
 *
 * The host (API, router, emulators) runs in this process, so SQS — in memory in the emulator —
 * outlives the kill.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { apiAs, publishEvents } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually } from '../support/waiting.js';

const EVENTS = 1000;
const PUBLISH_BATCH = 100;
const RECEIVE_BATCH = 25;
const LOCK_SECONDS = 10;
const ACKNOWLEDGED_BEFORE_KILL = 300;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:pull-crash';
const CONSUMER = fileURLToPath(new URL('./pull-crash-consumer.ts', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

let koerier: TestHost;
const children: ChildProcess[] = [];

beforeAll(async () => {
  koerier = await startTestHost({ [settingEnv.logLevel]: 'warn' });
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await koerier?.stop();
});

interface ReceivedEvent {
  readonly id: string;
  readonly lockeduntil: string;
  readonly deliverycount: number;
  readonly deliverykey: string;
}

/** What one consumer process reported, line by line. */
class Consumer {
  readonly received: { at: number; event: ReceivedEvent }[] = [];
  readonly acking = new Set<string>();
  readonly acknowledged = new Set<string>();
  readonly failed: string[] = [];
  readonly answered = new Set<string>();
  private pending = '';
  private exited: string | undefined;

  constructor(readonly process: ChildProcess) {
    process.stdout!.on('data', (chunk: Buffer) => {
      this.pending += chunk.toString();
      let newline: number;
      while ((newline = this.pending.indexOf('\n')) >= 0) {
        this.take(JSON.parse(this.pending.slice(0, newline)) as Record<string, unknown>);
        this.pending = this.pending.slice(newline + 1);
      }
    });
    process.once('exit', (code, signal) => (this.exited = `consumer exited (${code ?? signal})`));
  }

  /** Fails a wait at once if the consumer died on its own. */
  alive(): void {
    if (this.exited) throw new Error(this.exited);
  }

  /** Received by this consumer and never sent to be acknowledged: certainly still locked to it. */
  held(): Set<string> {
    return new Set(this.received.map((r) => r.event.id).filter((id) => !this.acking.has(id)));
  }

  /** Sent to be acknowledged, but killed before the answer came: acknowledged or not, nobody knows. */
  unanswered(): Set<string> {
    return new Set([...this.acking].filter((id) => !this.answered.has(id)));
  }

  kill(): Promise<void> {
    return new Promise((resolve) => {
      this.process.removeAllListeners('exit');
      this.process.once('exit', () => resolve());
      this.process.kill('SIGKILL');
    });
  }

  private take(line: Record<string, unknown>): void {
    if (line['kind'] === 'received') {
      for (const event of line['events'] as ReceivedEvent[]) this.received.push({ at: line['at'] as number, event });
    } else if (line['kind'] === 'acking') {
      for (const id of line['ids'] as string[]) this.acking.add(id);
    } else if (line['kind'] === 'acked') {
      for (const id of line['succeeded'] as string[]) {
        this.acknowledged.add(id);
        this.answered.add(id);
      }
      for (const id of line['failed'] as string[]) {
        this.failed.push(id);
        this.answered.add(id);
      }
    }
  }
}

function startConsumer(subscriptionId: string, token: string): Consumer {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CONSUMER, koerier.url, subscriptionId, token, String(RECEIVE_BATCH), String(LOCK_SECONDS)],
    {
      cwd: REPOSITORY,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  return new Consumer(child);
}

/** On the emulator `visible` counts every message not delayed, locked ones too; `locked` the ones a receive holds. */
async function messagesIn(queueName: string): Promise<{ visible: number; locked: number }> {
  const sqs = koerier.host.awsClients.sqs;
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes['ApproximateNumberOfMessages']),
    locked: Number(Attributes['ApproximateNumberOfMessagesNotVisible']),
  };
}

describe('a pull consumer killed mid-run (EDU-17)', () => {
  it('EDU-17, EDU-IDEM-2: of 1,000 events none is lost; what the killed consumer held comes back after its lock, delivery count raised, same delivery key', async () => {
    const manager = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
    const type = `nl.example.pullcrash.${randomUUID().slice(0, 8)}.v1`;
    const created = await apiAs(koerier.url, manager).POST('/subscriptions', {
      body: { delivery: 'pull', types: [type] },
    });
    expect(created.response.status).toBe(201);
    const id = created.data!.id;
    const queue = `koerier-pull-${id}`;

    const ids = Array.from({ length: EVENTS }, () => randomUUID());
    const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
    for (let i = 0; i < ids.length; i += PUBLISH_BATCH)
      await publishEvents(
        publisher,
        ids.slice(i, i + PUBLISH_BATCH).map((id) => ({ specversion: '1.0', id, source: SOURCE, type, data: { id } })),
      );
    await eventually(
      `${EVENTS} events routed to the pull queue`,
      async () => (await messagesIn(queue)).visible === EVENTS,
      { timeoutMs: 60_000 },
    );

    const consumer = await koerier.token('dev-subscriber', ['events:consume']);
    const first = startConsumer(id, consumer);
    await eventually(
      () => `${ACKNOWLEDGED_BEFORE_KILL} acknowledged by the first consumer (${first.acknowledged.size} so far)`,
      () => {
        first.alive();
        return first.acknowledged.size >= ACKNOWLEDGED_BEFORE_KILL;
      },
      { timeoutMs: 60_000, intervalMs: 10 },
    );
    await first.kill();
    const held = first.held();
    const unanswered = first.unanswered();
    // Killed in the middle, holding a batch it had not acknowledged (it prefetches one).
    expect(first.acknowledged.size).toBeLessThan(EVENTS);
    expect(held.size).toBeGreaterThan(0);
    expect(first.failed).toEqual([]);

    const second = startConsumer(id, consumer);
    const done = () => new Set([...first.acknowledged, ...second.acknowledged, ...unanswered]);
    await eventually(
      () =>
        `every event acknowledged (${done().size} of ${EVENTS}, ${[...held].filter((h) => !second.acknowledged.has(h)).length} held ones still out)`,
      async () => {
        second.alive();
        if (done().size < EVENTS) return false;
        const left = await messagesIn(queue);
        return left.visible === 0 && left.locked === 0;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    await second.kill();

    // Every one of the 1,000 acknowledged (an unanswered acknowledge of the killed consumer either
    // went through, or the event came back and was acknowledged again: the queue is empty), no other.
    expect([...done()].sort()).toEqual([...ids].sort());
    expect(second.failed).toEqual([]);

    // What the killed consumer held came back only after its lock, with its count raised and its key.
    const firstReceipt = new Map(first.received.map((r) => [r.event.id, r.event]));
    for (const heldId of held) {
      const before = firstReceipt.get(heldId)!;
      const again = second.received.find((r) => r.event.id === heldId);
      expect(again, `held event ${heldId} received again`).toBeDefined();
      expect(again!.event.deliverycount).toBeGreaterThanOrEqual(2);
      expect(again!.event.deliverykey).toBe(before.deliverykey);
      expect(again!.at).toBeGreaterThanOrEqual(Date.parse(before.lockeduntil));
      expect(second.acknowledged.has(heldId)).toBe(true);
    }

    // EDU-IDEM-2: one delivery key per event across every receive of both consumers.
    const keys = new Map<string, Set<string>>();
    for (const { event } of [...first.received, ...second.received])
      keys.set(event.id, (keys.get(event.id) ?? new Set()).add(event.deliverykey));
    expect([...keys.values()].filter((k) => k.size !== 1)).toEqual([]);

    // Nothing went to the dead letters on the way.
    const deadLetters = await fetch(`${koerier.url}/subscriptions/${id}/dead-letters`, {
      headers: { authorization: `Bearer ${manager}` },
    });
    expect(deadLetters.status).toBe(200);
    expect(((await deadLetters.json()) as { deadLetters: unknown[] }).deadLetters).toEqual([]);

    const redelivered = second.received.filter((r) => r.event.deliverycount > 1).length;
    console.info(
      `pull crash test: ${first.acknowledged.size} acknowledged before the kill, ${held.size} held and ${unanswered.size} unanswered at the kill, ${redelivered} received again, ${second.acknowledged.size} acknowledged after`,
    );
  }, 150_000);
});
