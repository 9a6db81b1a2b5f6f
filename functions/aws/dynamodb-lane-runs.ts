/**
 * `LaneRuns` (core/ordering/lane-runs.ts, issue 33 batch delivery) on the lanes of
 * dynamodb-ordered-lanes.ts: the same items, and three more attributes on the lane's state —
 *
 *   `runOf`, `runThrough`  the head whose run was fixed, and the run's last sequence: every attempt
 *                          of that head sends the same events (EDU-IDEM-11)
 *   `parkedThrough`        a run parked as a whole reaches to here: the lane parks again at each of
 *                          its events in turn, each waiting for its dead letter's redrive
 *
 * Moving the lane over a run and parking it are each one conditional update of the state, as a
 * single event's are (dynalite has no transactions); the run's `e#` items are deleted after.
 */
import { DeleteItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { LaneAddress } from '../core/ordering/ordered-lanes.js';
import type { LaneRuns, RunBehind, StoredLaneEvent } from '../core/ordering/lane-runs.js';
import { batchWriteAll } from './dynamodb-batch-write.js';
import { num, PK, SK, type Item } from './delivery-table-items.js';
import { DynamoDbOrderedLanes, eventKey, nextOf } from './dynamodb-ordered-lanes.js';

/** The lane's first unsettled sequence is `s` (a lane never written has 1). */
const AT_HEAD = '(#next = :s OR (attribute_not_exists(#next) AND :s = :one))';

export class DynamoDbOrderedLanesWithRuns extends DynamoDbOrderedLanes implements LaneRuns {
  async behind(lane: LaneAddress, head: number, limit: number): Promise<RunBehind> {
    const through = runThroughOf(await this.state(lane), head);
    const last = through ?? head + limit;
    if (last <= head) return { ...(through === undefined ? {} : { through }), events: [] };
    const { [PK]: pk } = this.key(lane, 'lane');
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': pk!, ':from': { S: eventKey(head + 1) }, ':to': { S: eventKey(last) } },
        ConsistentRead: true,
      }),
    );
    const events: StoredLaneEvent[] = [];
    for (const item of result.Items ?? []) {
      // Consecutive only: a number not stored (yet) ends the run.
      const sequence = head + 1 + events.length;
      if (item[SK]?.S !== eventKey(sequence) || item['body']?.S === undefined) break;
      events.push({ sequence, body: item['body'].S });
    }
    return { ...(through === undefined ? {} : { through }), events };
  }

  async fixRun(lane: LaneAddress, head: number, through: number, holder: string): Promise<number | undefined> {
    const fixed = await this.update(lane, {
      UpdateExpression: 'SET #runOf = :s, #runThrough = :through',
      ConditionExpression: `${AT_HEAD} AND #holder = :holder AND (attribute_not_exists(#runOf) OR #runOf <> :s)`,
      ExpressionAttributeNames: {
        '#next': 'next',
        '#holder': 'holder',
        '#runOf': 'runOf',
        '#runThrough': 'runThrough',
      },
      ExpressionAttributeValues: {
        ':s': num(head),
        ':one': num(1),
        ':through': num(through),
        ':holder': { S: holder },
      },
    });
    if (fixed !== undefined) return through;
    return runThroughOf(await this.state(lane), head);
  }

  async advanceThrough(lane: LaneAddress, first: number, last: number): Promise<string | undefined> {
    // The usual case first, in one update: the lane at `first` and no parked run going on past
    // `last`. Only when that fails is the state read, to re-park a parked run at its next event.
    const names = {
      '#next': 'next',
      '#holder': 'holder',
      '#until': 'holdUntil',
      '#runOf': 'runOf',
      '#runThrough': 'runThrough',
    };
    const values = { ':after': num(last + 1), ':s': num(first), ':one': num(1) };
    let moved = await this.update(lane, {
      UpdateExpression: 'SET #next = :after REMOVE #holder, #until, #runOf, #runThrough, #parkedThrough',
      ConditionExpression: `${AT_HEAD} AND (attribute_not_exists(#parkedThrough) OR #parkedThrough <= :last)`,
      ExpressionAttributeNames: { ...names, '#parkedThrough': 'parkedThrough' },
      ExpressionAttributeValues: { ...values, ':last': num(last) },
    });
    if (moved === undefined && Number((await this.state(lane))?.['parkedThrough']?.N ?? 0) > last)
      moved = await this.update(lane, {
        UpdateExpression: 'SET #next = :after, #parked = :true REMOVE #holder, #until, #runOf, #runThrough',
        ConditionExpression: AT_HEAD,
        ExpressionAttributeNames: { ...names, '#parked': 'parked' },
        ExpressionAttributeValues: { ...values, ':true': { BOOL: true } },
      });
    await this.forget(lane, first, last);
    // Written first, read after (the settler does the reverse): one of us queues the next head.
    const state = moved ?? (await this.state(lane));
    if (state?.['parked']?.BOOL === true || nextOf(state) !== last + 1) return undefined;
    return (await this.get(lane, eventKey(last + 1)))?.['body']?.S;
  }

  async parkThrough(lane: LaneAddress, first: number, last: number): Promise<void> {
    const run = last > first;
    await this.update(lane, {
      UpdateExpression: `SET #parked = :true${run ? ', #parkedThrough = :last' : ''} REMOVE #holder, #until, #runOf, #runThrough`,
      ConditionExpression: AT_HEAD,
      ExpressionAttributeNames: {
        '#next': 'next',
        '#parked': 'parked',
        '#holder': 'holder',
        '#until': 'holdUntil',
        '#runOf': 'runOf',
        '#runThrough': 'runThrough',
        ...(run ? { '#parkedThrough': 'parkedThrough' } : {}),
      },
      ExpressionAttributeValues: {
        ':true': { BOOL: true },
        ':s': num(first),
        ':one': num(1),
        ...(run ? { ':last': num(last) } : {}),
      },
    });
  }

  /** The settled events' items: one delete for one event, one batch write for a run. */
  private async forget(lane: LaneAddress, first: number, last: number): Promise<void> {
    if (first === last) {
      await this.client.send(
        new DeleteItemCommand({ TableName: this.tableName, Key: this.key(lane, eventKey(first)) }),
      );
      return;
    }
    const keys = Array.from({ length: last - first + 1 }, (_, i) => this.key(lane, eventKey(first + i)));
    await batchWriteAll(
      this.client,
      this.tableName,
      keys.map((Key) => ({ DeleteRequest: { Key } })),
      'ordered run settled',
    );
  }
}

function runThroughOf(state: Item | undefined, head: number): number | undefined {
  return state?.['runOf']?.N === String(head) && state['runThrough']?.N !== undefined
    ? Number(state['runThrough'].N)
    : undefined;
}
