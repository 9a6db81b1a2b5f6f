/**
 * `OrderedLanes` (core/ordering/ordered-lanes.ts, issue 33) in the `deliveries` table, one partition
 * per lane: `pk` = `lane#<subscription id>#<SHA-256 of the key, base64url>` (any key fits, and
 * lanes spread over partitions), with
 *
 *   sk `lane`             the lane's state: `next` (first unsettled sequence), `last` (highest
 *                         given), `lastPosition` (the highest acceptance position numbered), the
 *                         group a settler numbered last (`numbered` delivery ids from
 *                         `numberedFrom`), the hold (`holder`, `holdUntil`), `parked`, the settling
 *                         lease (`settler`, `settleUntil`), and the key itself
 *   sk `p#<position>#<delivery id>`  an event staged by the router, not yet numbered (`body`)
 *   sk `e#<sequence>`     an event waiting in the lane: its stored delivery message (`body`)
 *   sk `d#<delivery id>`  which sequence a delivery got, so a router retry finds its place again
 *
 * Staged events and the state carry the lane sweeper's index attributes (`sweepShard`,
 * `sweepSince`: ./dynamodb-lane-sweep-index.ts), written with what is written anyway.
 *
 * Conditional writes only (dynalite has no transactions): sequences are taken by an atomic update
 * of the state's `last`, conditional on `lastPosition` being lower than the events' positions, so
 * the numbers follow acceptance order (docs/ORDERING.md); settling does it a group at a time
 * (./dynamodb-lane-settling.ts). The lane's state has no TTL: a key's sequence must not start again at 1.
 */
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { Appended, LaneAddress, LaneTake, OrderedLanes } from '../core/ordering/ordered-lanes.js';
import { num, type Item } from './delivery-table-items.js';
import { DynamoDbLaneSettling, PLACE_SECONDS } from './dynamodb-lane-settling.js';
import { eventKey, nextOf } from './dynamodb-lane-table.js';

export { eventKey, nextOf } from './dynamodb-lane-table.js';

export class DynamoDbOrderedLanes extends DynamoDbLaneSettling implements OrderedLanes {
  async head(lane: LaneAddress): Promise<{ next: number; parked: boolean }> {
    const state = await this.state(lane);
    return { next: nextOf(state), parked: state?.['parked']?.BOOL === true };
  }

  async append(
    lane: LaneAddress,
    deliveryId: string,
    build: (sequence: number) => string,
    position?: number,
    readHead = true,
  ): Promise<Appended> {
    const headOf = async (sequence: number) => readHead && isHead(await this.state(lane), sequence);
    const known = await this.get(lane, `d#${deliveryId}`);
    if (known?.['sequence']?.N !== undefined) {
      const sequence = Number(known['sequence'].N);
      const stored = await this.get(lane, eventKey(sequence));
      return { sequence, body: stored?.['body']?.S ?? build(sequence), head: await headOf(sequence) };
    }
    const { sequence, late } = await this.number(lane, deliveryId, position);
    const body = build(sequence);
    // The number is this delivery's alone (the state update gave it), so the event is stored
    // unconditionally: a retry after a crash right here writes the same item again.
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...this.key(lane, eventKey(sequence)), body: { S: body }, deliveryId: { S: deliveryId } },
      }),
    );
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...this.key(lane, `d#${deliveryId}`),
          sequence: num(sequence),
          expiresAt: num(Math.ceil(this.now() / 1000) + PLACE_SECONDS),
        },
      }),
    );
    // Stored first, read after (the delivery function does the reverse): one of us queues the head.
    return { sequence, body, head: await headOf(sequence), ...(late ? { late } : {}) };
  }

  /**
   * The lane's next number, taken atomically on its state. With a position, only above every
   * position numbered before (acceptance order); a lower one is numbered at the end, `late`.
   */
  private async number(
    lane: LaneAddress,
    deliveryId: string,
    position: number | undefined,
  ): Promise<{ sequence: number; late: boolean }> {
    // With the sweeper's mark: a head numbered now is released now (./dynamodb-lane-sweep-index.ts).
    const increment =
      'SET #last = if_not_exists(#last, :zero) + :one, #key = :key, #by = :d, #shard = :shard, #since = :since';
    const names = { '#last': 'last', '#key': 'key', '#by': 'lastDelivery', ...this.markNames };
    const values = {
      ':zero': num(0),
      ':one': num(1),
      ':key': { S: lane.key },
      ':d': { S: deliveryId },
      ...this.mark(lane),
    };
    if (position !== undefined) {
      const inOrder = await this.update(lane, {
        UpdateExpression: `${increment}, #pos = :p`,
        ConditionExpression: 'attribute_not_exists(#pos) OR #pos < :p',
        ExpressionAttributeNames: { ...names, '#pos': 'lastPosition' },
        ExpressionAttributeValues: { ...values, ':p': num(position) },
      });
      if (inOrder !== undefined) return { sequence: Number(inOrder['last']!.N), late: false };
      // The router retrying the last one numbered (it stopped before storing its event): its number again.
      const state = await this.state(lane);
      if (state?.['lastDelivery']?.S === deliveryId && state['lastPosition']?.N === String(position))
        return { sequence: Number(state['last']!.N), late: false };
    }
    const taken = await this.update(lane, {
      UpdateExpression: increment,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
    return { sequence: Number(taken!['last']!.N), late: position !== undefined };
  }

  async take(
    lane: LaneAddress,
    sequence: number,
    hold: { holder: string; until: number; now: number; redrive: boolean },
  ): Promise<LaneTake> {
    // The hold first: a head taken (the usual case) costs one request; what stood in its way is read after.
    const taken = await this.update(lane, {
      UpdateExpression: 'SET #holder = :holder, #until = :until REMOVE #parked',
      ConditionExpression:
        '(#next = :s OR (attribute_not_exists(#next) AND :s = :one)) AND ' +
        '(attribute_not_exists(#holder) OR #holder = :holder OR #until < :now)' +
        (hold.redrive ? '' : ' AND (attribute_not_exists(#parked) OR #parked = :false)'),
      ExpressionAttributeNames: { '#holder': 'holder', '#until': 'holdUntil', '#parked': 'parked', '#next': 'next' },
      ExpressionAttributeValues: {
        ':holder': { S: hold.holder },
        ':until': num(hold.until),
        ':s': num(sequence),
        ':one': num(1),
        ':now': num(hold.now),
        ...(hold.redrive ? {} : { ':false': { BOOL: false } }),
      },
    });
    if (taken !== undefined) return 'mine';
    const state = await this.state(lane);
    const next = nextOf(state);
    if (sequence < next) return 'settled';
    if (sequence > next) return 'early';
    if (state?.['parked']?.BOOL === true && !hold.redrive) return 'parked';
    return 'held';
  }

  async advance(lane: LaneAddress, sequence: number): Promise<string | undefined> {
    const advanced = await this.update(lane, {
      // With the sweeper's mark: the next head is released now.
      UpdateExpression: 'SET #next = :after, #shard = :shard, #since = :since REMOVE #holder, #until',
      ConditionExpression: '#next = :s OR (attribute_not_exists(#next) AND :s = :one)',
      ExpressionAttributeNames: { '#next': 'next', '#holder': 'holder', '#until': 'holdUntil', ...this.markNames },
      ExpressionAttributeValues: {
        ':after': num(sequence + 1),
        ':s': num(sequence),
        ':one': num(1),
        ...this.mark(lane),
      },
    });
    await this.client.send(
      new DeleteItemCommand({ TableName: this.tableName, Key: this.key(lane, eventKey(sequence)) }),
    );
    // The state the advance left (or, when this head was settled before, the state as it is now).
    const state = advanced ?? (await this.state(lane));
    if (state?.['parked']?.BOOL === true || nextOf(state) !== sequence + 1) return undefined;
    return (await this.get(lane, eventKey(sequence + 1)))?.['body']?.S;
  }

  async stored(lane: LaneAddress, sequence: number): Promise<string | undefined> {
    return (await this.get(lane, eventKey(sequence)))?.['body']?.S;
  }

  async park(lane: LaneAddress, sequence: number): Promise<void> {
    await this.update(lane, {
      UpdateExpression: 'SET #parked = :true REMOVE #holder, #until',
      ConditionExpression: '#next = :s OR (attribute_not_exists(#next) AND :s = :one)',
      ExpressionAttributeNames: { '#next': 'next', '#parked': 'parked', '#holder': 'holder', '#until': 'holdUntil' },
      ExpressionAttributeValues: { ':true': { BOOL: true }, ':s': num(sequence), ':one': num(1) },
    });
  }
}

function isHead(state: Item | undefined, sequence: number): boolean {
  return nextOf(state) === sequence && state?.['parked']?.BOOL !== true;
}
