/**
 * The settling half of the ordered lanes in the `deliveries` table (./dynamodb-ordered-lanes.ts
 * describes the items): the router stages events by acceptance position, and one settler at a time
 * (the settling lease on the lane's state) numbers them in acceptance order — in groups, one state
 * update per group, fenced by the lease — and stores them (core/ordering/lane-settling.ts).
 */
import { DeleteItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { LaneAddress, LaneHead, SettledAppend, StagedEvent } from '../core/ordering/ordered-lanes.js';
import { batchWriteAll } from './dynamodb-batch-write.js';
import { num, PK, SK, type Item } from './delivery-table-items.js';
import { lanePartition, sweepShard } from './dynamodb-lane-sweep-index.js';
import {
  DynamoDbLaneTable,
  STATE,
  eventKey,
  formatPosition,
  nextOf,
  optionalNumber,
  stagedKey,
} from './dynamodb-lane-table.js';

/**
 * Staged events numbered with one update of the lane's state: their `e#` puts then go in one
 * BatchWriteItem, their places and unstaging in two (DynamoDB's 25 per request).
 */
const NUMBERED_GROUP = 25;
/** A delivery's place is remembered as long as SQS keeps a message: a retry comes within that. */
export const PLACE_SECONDS = 14 * 24 * 3600;

export class DynamoDbLaneSettling extends DynamoDbLaneTable {
  /** The state each settling claim of this container left, by lane and holder, until its pass reads it. */
  private readonly claimedStates = new Map<string, Item>();

  async stage(entries: readonly { lane: LaneAddress; event: StagedEvent }[]): Promise<void> {
    // One item per key: BatchWriteItem refuses a request that names a key twice (the same delivery
    // twice in a router batch, as SQS may hand a message over twice), and the copies are the same.
    const items = new Map<string, Item>();
    for (const { lane, event } of entries)
      items.set(`${lanePartition(lane)} ${stagedKey(event)}`, this.stagedItem(lane, event));
    await batchWriteAll(
      this.client,
      this.tableName,
      [...items.values()].map((Item) => ({ PutRequest: { Item } })),
      'ordered events staged',
    );
  }

  private stagedItem(lane: LaneAddress, event: StagedEvent): Item {
    return {
      ...this.key(lane, stagedKey(event)),
      body: { S: event.body },
      deliveryId: { S: event.deliveryId },
      position: num(event.position),
      // The sweeper's index: a staged event still here well past its window lost its settle message.
      key: { S: lane.key },
      sweepShard: { S: sweepShard(lanePartition(lane), 'staged') },
      sweepSince: num(Math.floor(event.position / 1000)),
      // A staged event nobody settles (its subscription deleted) goes when a place would.
      expiresAt: num(Math.ceil(this.now() / 1000) + PLACE_SECONDS),
    };
  }

  async staged(lane: LaneAddress, upTo: number, limit: number): Promise<StagedEvent[]> {
    const { [PK]: pk } = this.key(lane, STATE);
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        // `#` sorts before every digit, `~` after: every delivery id of the last position is in range.
        ExpressionAttributeValues: { ':pk': pk!, ':from': { S: 'p#' }, ':to': { S: `p#${formatPosition(upTo)}#~` } },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({
      deliveryId: item['deliveryId']!.S!,
      position: Number(item['position']!.N),
      body: item['body']!.S!,
    }));
  }

  async unstage(lane: LaneAddress, event: Pick<StagedEvent, 'deliveryId' | 'position'>): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(lane, stagedKey(event)) }));
  }

  async claimSettling(lane: LaneAddress, lease: { holder: string; until: number; now: number }): Promise<boolean> {
    const claimed = await this.update(lane, {
      UpdateExpression: 'SET #settler = :holder, #settleUntil = :until, #key = :key',
      ConditionExpression: 'attribute_not_exists(#settler) OR #settler = :holder OR #settleUntil < :now',
      ExpressionAttributeNames: { '#settler': 'settler', '#settleUntil': 'settleUntil', '#key': 'key' },
      ExpressionAttributeValues: {
        ':holder': { S: lease.holder },
        ':until': num(lease.until),
        ':now': num(lease.now),
        ':key': { S: lane.key },
      },
    });
    if (claimed === undefined) return false;
    // The lane's state as the claim left it: the settle pass starts from it instead of reading it.
    this.claimedStates.set(claimKey(lane, lease.holder), claimed);
    return true;
  }

  async releaseSettling(lane: LaneAddress, holder: string): Promise<LaneHead | undefined> {
    this.claimedStates.delete(claimKey(lane, holder));
    const released = await this.update(lane, {
      UpdateExpression: 'REMOVE #settler, #settleUntil',
      ConditionExpression: '#settler = :holder',
      ExpressionAttributeNames: { '#settler': 'settler', '#settleUntil': 'settleUntil' },
      ExpressionAttributeValues: { ':holder': { S: holder } },
    });
    return released === undefined ? undefined : { next: nextOf(released), parked: released['parked']?.BOOL === true };
  }

  async appendStaged(
    lane: LaneAddress,
    events: readonly StagedEvent[],
    build: (staged: StagedEvent, sequence: number) => string,
    settler: string,
  ): Promise<{ appended: SettledAppend[]; leaseLost: boolean }> {
    if (events.length === 0) return { appended: [], leaseLost: false };
    // Under the lease nothing but an append without a position changes what is read here, and
    // `numberGroup` reads again when one did, so the claim's state serves the first pass.
    const claimed = this.claimedStates.get(claimKey(lane, settler));
    this.claimedStates.delete(claimKey(lane, settler));
    let state = claimed ?? (await this.state(lane));
    const appended: SettledAppend[] = [];
    const lastPosition = optionalNumber(state?.['lastPosition']);
    const numbered = numberedGroupOf(state);
    const inOrder: StagedEvent[] = [];
    const late: StagedEvent[] = [];
    for (const event of events) {
      // Above every position numbered before: it cannot have a place yet (no `d#` read needed).
      if (lastPosition === undefined || event.position > lastPosition) {
        inOrder.push(event);
        continue;
      }
      const known = optionalNumber((await this.get(lane, `d#${event.deliveryId}`))?.['sequence']);
      if (known !== undefined) {
        // Stored before (its `e#` went before its `d#`): the router staged it again, or a settler died
        // before unstaging it. It keeps its place.
        const stored = (await this.get(lane, eventKey(known)))?.['body']?.S;
        await this.unstage(lane, event);
        appended.push({ deliveryId: event.deliveryId, sequence: known, body: stored ?? build(event, known) });
      } else if (numbered.has(event.deliveryId)) {
        // Numbered by a settler that died before storing its group: stored and unstaged now.
        const sequence = numbered.get(event.deliveryId)!;
        const body = build(event, sequence);
        await this.storeNumbered(lane, [{ event, sequence, body }]);
        appended.push({ deliveryId: event.deliveryId, sequence, body });
      } else late.push(event);
    }
    const groups = [
      ...chunk(late, NUMBERED_GROUP).map((group) => ({ group, late: true })),
      ...chunk(inOrder, NUMBERED_GROUP).map((group) => ({ group, late: false })),
    ];
    for (const { group, late: isLate } of groups) {
      const numberedState = await this.numberGroup(lane, group, settler, isLate, state);
      if (numberedState === undefined) return { appended, leaseLost: true };
      state = numberedState;
      const first = Number(state['numberedFrom']!.N);
      const placed = group.map((event, i) => ({ event, sequence: first + i, body: build(event, first + i) }));
      await this.storeNumbered(lane, placed);
      for (const { event, sequence, body } of placed)
        appended.push({ deliveryId: event.deliveryId, sequence, body, ...(isLate ? { late: true } : {}) });
    }
    return { appended, leaseLost: false };
  }

  /**
   * Numbers a group of staged events with one update of the lane's state: the next `group.length`
   * sequences, on condition that `settler` still holds the settling lease (the fence: a settler
   * that outlasted its lease numbers nothing) and that `last` is what this settler read (an
   * append without a position may have come between). In acceptance order (not `late`), also on
   * condition that every position numbered before is lower. The state names the group and its
   * first sequence (`numbered`, `numberedFrom`) until the next group, for a settler taking over.
   * Undefined: the lease is lost.
   */
  private async numberGroup(
    lane: LaneAddress,
    group: readonly StagedEvent[],
    settler: string,
    late: boolean,
    read: Item | undefined,
  ): Promise<Item | undefined> {
    let state = read;
    for (let attempt = 0; ; attempt++) {
      const before = Number(state?.['last']?.N ?? 0);
      const positions = group.map((event) => event.position);
      const numberedState = await this.update(lane, {
        UpdateExpression:
          'SET #last = :last, #from = :from, #numbered = :ids, #by = :by, #key = :key, #shard = :shard, #since = :since' +
          (late ? '' : ', #pos = :highest'),
        ConditionExpression:
          '#settler = :settler AND (#last = :before OR (attribute_not_exists(#last) AND :before = :zero))' +
          (late ? '' : ' AND (attribute_not_exists(#pos) OR #pos < :lowest)'),
        ExpressionAttributeNames: {
          '#last': 'last',
          '#from': 'numberedFrom',
          '#numbered': 'numbered',
          '#by': 'lastDelivery',
          '#key': 'key',
          '#settler': 'settler',
          ...this.markNames,
          ...(late ? {} : { '#pos': 'lastPosition' }),
        },
        ExpressionAttributeValues: {
          ':last': num(before + group.length),
          ':from': num(before + 1),
          ':ids': { L: group.map((event) => ({ S: event.deliveryId })) },
          ':by': { S: group.at(-1)!.deliveryId },
          ':key': { S: lane.key },
          ':settler': { S: settler },
          ':before': num(before),
          ':zero': num(0),
          ...this.mark(lane),
          ...(late ? {} : { ':highest': num(Math.max(...positions)), ':lowest': num(Math.min(...positions)) }),
        },
      });
      if (numberedState !== undefined) return numberedState;
      state = await this.state(lane);
      if (state?.['settler']?.S !== settler) return undefined;
      // Under the lease only a numbering without a position moves `last` (a test, events from before
      // positions); nothing but a settler moves `lastPosition`, so a second miss is a bug, not a race.
      if (attempt === 2)
        throw new Error(`lane ${lanePartition(lane)}: numbering under the settling lease failed 3 times`);
    }
  }

  /**
   * Stores numbered events: their `e#` items first, then their places (`d#`) and the removal of
   * their staged items, so a place found means its event is stored.
   */
  protected async storeNumbered(
    lane: LaneAddress,
    placed: readonly { readonly event: StagedEvent; readonly sequence: number; readonly body: string }[],
  ): Promise<void> {
    const expiresAt = num(Math.ceil(this.now() / 1000) + PLACE_SECONDS);
    await batchWriteAll(
      this.client,
      this.tableName,
      placed.map(({ event, sequence, body }) => ({
        PutRequest: {
          Item: { ...this.key(lane, eventKey(sequence)), body: { S: body }, deliveryId: { S: event.deliveryId } },
        },
      })),
      'ordered lane events',
    );
    await batchWriteAll(
      this.client,
      this.tableName,
      placed.flatMap(({ event, sequence }) => [
        { PutRequest: { Item: { ...this.key(lane, `d#${event.deliveryId}`), sequence: num(sequence), expiresAt } } },
        { DeleteRequest: { Key: this.key(lane, stagedKey(event)) } },
      ]),
      'ordered lane places',
    );
  }
}

function claimKey(lane: LaneAddress, holder: string): string {
  return `${lanePartition(lane)}\n${holder}`;
}

/** The group numbered last, by delivery id: a settler taking over finds their sequences here. */
function numberedGroupOf(state: Item | undefined): Map<string, number> {
  const first = optionalNumber(state?.['numberedFrom']);
  const ids = state?.['numbered']?.L ?? [];
  return new Map(first === undefined ? [] : ids.map((id, i) => [id.S ?? '', first + i] as const));
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}
