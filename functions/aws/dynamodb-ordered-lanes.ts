/**
 * `OrderedLanes` (core/ordering/ordered-lanes.ts, issue 33) in the `deliveries` table, one partition
 * per lane: `pk` = `lane#<subscription id>#<SHA-256 of the key, base64url>` (any key fits, and
 * lanes spread over partitions), with
 *
 *   sk `lane`             the lane's state: `next` (first unsettled sequence), `last` (highest
 *                         given), the hold (`holder`, `holdUntil`), `parked`, the settling lease
 *                         (`settler`, `settleUntil`), and the key itself
 *   sk `p#<position>#<delivery id>`  an event staged by the router, not yet numbered (`body`)
 *   sk `e#<sequence>`     an event waiting in the lane: its stored delivery message (`body`)
 *   sk `d#<delivery id>`  which sequence a delivery got, so a router retry finds its place again
 *
 * Staged events and the state carry the lane sweeper's index attributes (`sweepShard`,
 * `sweepSince`: ./dynamodb-lane-sweep-index.ts), written with what is written anyway.
 *
 * Conditional writes only (dynalite has no transactions): a sequence is taken by an atomic update
 * of the state's `last`, conditional on `lastPosition` (the acceptance position numbered last)
 * being lower than the event's, so the numbers follow acceptance order (docs/ORDERING.md). The
 * lane's state has no TTL: a key's sequence must not start again at 1.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type {
  Appended,
  LaneAddress,
  LaneHead,
  LaneTake,
  OrderedLanes,
  SettledAppend,
  StagedEvent,
} from '../core/ordering/ordered-lanes.js';
import { batchWriteAll } from './dynamodb-batch-write.js';
import { formatSequence } from '../core/ordering/ordering-settings.js';
import { num, PK, SK, type Item } from './delivery-table-items.js';
import { lanePartition, sweepShard } from './dynamodb-lane-sweep-index.js';

const STATE = 'lane';
/**
 * Staged events numbered with one update of the lane's state: their `e#` puts then go in one
 * BatchWriteItem, their places and unstaging in two (DynamoDB's 25 per request).
 */
const NUMBERED_GROUP = 25;
/** A delivery's place is remembered as long as SQS keeps a message: a retry comes within that. */
const PLACE_SECONDS = 14 * 24 * 3600;

export class DynamoDbOrderedLanes implements OrderedLanes {
  /** The state each settling claim of this container left, by lane and holder, until its pass reads it. */
  private readonly claimedStates = new Map<string, Item>();

  constructor(
    protected readonly client: DynamoDBClient,
    protected readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  async stage(lane: LaneAddress, event: StagedEvent): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...this.key(lane, stagedKey(event)),
          body: { S: event.body },
          deliveryId: { S: event.deliveryId },
          position: num(event.position),
          // The sweeper's index: a staged event still here well past its window lost its settle message.
          key: { S: lane.key },
          sweepShard: { S: sweepShard(this.key(lane, STATE)[PK]!.S!, 'staged') },
          sweepSince: num(Math.floor(event.position / 1000)),
          // A staged event nobody settles (its subscription deleted) goes when a place would.
          expiresAt: num(Math.ceil(this.now() / 1000) + PLACE_SECONDS),
        },
      }),
    );
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

  protected key(lane: LaneAddress, sortKey: string): Item {
    return { [PK]: { S: lanePartition(lane) }, [SK]: { S: sortKey } };
  }

  private readonly markNames = { '#shard': 'sweepShard', '#since': 'sweepSince' };

  /** The sweeper's mark on the lane's state: its head released now. */
  private mark(lane: LaneAddress): Item {
    return { ':shard': { S: sweepShard(lanePartition(lane), 'marked') }, ':since': num(this.now()) };
  }

  protected async get(lane: LaneAddress, sortKey: string): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: this.key(lane, sortKey), ConsistentRead: true }),
    );
    return result.Item;
  }

  protected state(lane: LaneAddress): Promise<Item | undefined> {
    return this.get(lane, STATE);
  }

  /** The state after a conditional update; undefined when its condition did not hold. */
  protected async update(
    lane: LaneAddress,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ): Promise<Item | undefined> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(lane, STATE),
          ReturnValues: 'ALL_NEW',
          ...input,
        }),
      );
      return result.Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
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

function optionalNumber(attribute: { N?: string } | undefined): number | undefined {
  return attribute?.N === undefined ? undefined : Number(attribute.N);
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

export function eventKey(sequence: number): string {
  return `e#${formatSequence(sequence)}`;
}

/** Positions are safe integers (acceptance-position.ts): padded to 16 digits they sort as text. */
function formatPosition(position: number): string {
  return String(Math.max(0, Math.min(Math.floor(position), Number.MAX_SAFE_INTEGER))).padStart(16, '0');
}

function stagedKey({ deliveryId, position }: Pick<StagedEvent, 'deliveryId' | 'position'>): string {
  return `p#${formatPosition(position)}#${deliveryId}`;
}

export function nextOf(state: Item | undefined): number {
  return Number(state?.['next']?.N ?? 1);
}

function isHead(state: Item | undefined, sequence: number): boolean {
  return nextOf(state) === sequence && state?.['parked']?.BOOL !== true;
}
