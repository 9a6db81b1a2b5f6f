/**
 * The routed-event ledger in DynamoDB: one marker per routed event, in the idempotency table next
 * to the API's idempotency keys.
 *
 * Marking routed: `complete` sets the marker's state (one write per event). A router invocation
 * uses `batch()` instead: each marker it claims names a *commit* item (`routed-commit#<id>`, one
 * per up to 100 claims), and `completeAll` adds the routed claims' ids to it — one write for the
 * batch. A marker counts as routed when its state says so or its commit lists its claim id; a
 * claim released, taken over or never committed (a crash before the deliveries were queued) is
 * not listed, so its event is routed again as before. Writes per routed event: 1 + 1/batch.
 */
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import {
  routedEventKey,
  type ClaimedIdentity,
  type ClaimOptions,
  type EventAcceptance,
  type EventIdentity,
  type RoutedEventBatch,
  type RoutedTo,
  type RoutedEventLedger,
  type RoutingClaim,
} from '../core/routing/routed-events.js';
import {
  acceptanceAttributes,
  acceptanceJson,
  acceptanceOf,
  MARKER_KEY,
  MARKER_TTL,
  routesValue,
  type Item,
} from './routed-event-items.js';

/** Claim ids per commit item: 100 UUIDs stay under 4 KB. */
const COMMIT_CLAIMS = 100;

export class DynamoDbRoutedEventLedger implements RoutedEventLedger {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  claim(event: EventIdentity, options: ClaimOptions): Promise<RoutingClaim> {
    return this.claimFor(event, options, undefined);
  }

  batch(): RoutedEventBatch {
    const batchId = randomUUID();
    const commitOf = new Map<string, string>();
    let claims = 0;
    let expiresAt = 0;
    return {
      claim: async (event, options) => {
        const commit = `routed-commit#${batchId}.${Math.floor(claims++ / COMMIT_CLAIMS)}`;
        expiresAt = Math.max(expiresAt, Math.floor(options.now / 1000) + options.ttlSeconds);
        const claim = await this.claimFor(event, options, commit);
        if (claim.outcome === 'claimed') commitOf.set(claim.claimId, commit);
        return claim;
      },
      abandon: (event, claimId) => this.abandon(event, claimId),
      completeAll: async (routed: readonly ClaimedIdentity[]) => {
        const byCommit = new Map<string, ClaimedIdentity[]>();
        for (const claimed of routed) {
          const commit = commitOf.get(claimed.claimId);
          if (commit === undefined) await this.complete(claimed.event, claimed.claimId, claimed.routes);
          else byCommit.set(commit, [...(byCommit.get(commit) ?? []), claimed]);
        }
        await Promise.all([...byCommit].map(([commit, claims]) => this.commit(commit, claims, expiresAt)));
      },
    };
  }

  private async claimFor(
    event: EventIdentity,
    options: ClaimOptions,
    commit: string | undefined,
  ): Promise<RoutingClaim> {
    const key = { [MARKER_KEY]: { S: routedEventKey(event) } };
    const claimId = randomUUID();
    const lockExpiresAt = String(options.now + options.lockMs);
    const nowSeconds = String(Math.floor(options.now / 1000));
    for (let attempt = 0; attempt < 3; attempt++) {
      const routingId = randomUUID();
      try {
        // Absent, or routed so long ago that it is a new event now (after the TTL, EDU-IDEM-13).
        await this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: {
              ...key,
              state: { S: 'routing' },
              claimId: { S: claimId },
              routingId: { S: routingId },
              lockExpiresAt: { N: lockExpiresAt },
              ...(commit === undefined ? {} : { commit: { S: commit } }),
              // Issue 30 item 1: who accepted it, when, under which key — for the trace, in the write the claim makes anyway.
              ...acceptanceAttributes(options.acceptance),
              [MARKER_TTL]: { N: String(Math.floor(options.now / 1000) + options.ttlSeconds) },
            },
            ConditionExpression: 'attribute_not_exists(#pk) OR #ttl < :nowSeconds',
            ExpressionAttributeNames: { '#pk': MARKER_KEY, '#ttl': MARKER_TTL },
            ExpressionAttributeValues: { ':nowSeconds': { N: nowSeconds } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { outcome: 'claimed', claimId, routingId };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        // dynalite ignores ReturnValuesOnConditionCheckFailure; read the marker instead.
        const existing = error.Item ?? (await this.read(key));
        if (!existing) continue;
        if (existing['state']?.S === 'routed' || (await this.committed(existing))) {
          const first = acceptanceOf(existing);
          return first === undefined ? { outcome: 'duplicate' } : { outcome: 'duplicate', first };
        }
        if (Number(existing['lockExpiresAt']?.N ?? 0) >= options.now) return { outcome: 'busy' };
        // An earlier attempt failed or crashed: take over, keeping its routing id.
        try {
          await this.client.send(
            new UpdateItemCommand({
              TableName: this.tableName,
              Key: key,
              // Taken over by a batch: the new claim is committed with that batch.
              UpdateExpression: `SET claimId = :claimId, lockExpiresAt = :lock${commit === undefined ? '' : ', #commit = :commit'}`,
              ConditionExpression: '#state = :routing AND claimId = :previous',
              ExpressionAttributeNames: { '#state': 'state', ...(commit === undefined ? {} : { '#commit': 'commit' }) },
              ExpressionAttributeValues: {
                ...(commit === undefined ? {} : { ':commit': { S: commit } }),
                ':claimId': { S: claimId },
                ':lock': { N: lockExpiresAt },
                ':routing': { S: 'routing' },
                ':previous': { S: existing['claimId']?.S ?? '' },
              },
            }),
          );
          return { outcome: 'claimed', claimId, routingId: existing['routingId']?.S ?? routingId };
        } catch (takeoverError) {
          if (!(takeoverError instanceof ConditionalCheckFailedException)) throw takeoverError;
        }
      }
    }
    return { outcome: 'busy' };
  }

  async complete(event: EventIdentity, claimId: string, routes?: RoutedTo): Promise<void> {
    await this.updateHeld(
      event,
      claimId,
      `SET #state = :routed${routes === undefined ? '' : ', routes = :routes'} REMOVE lockExpiresAt`,
      { ':routed': { S: 'routed' }, ...(routes === undefined ? {} : { ':routes': routesValue(routes) }) },
    );
  }

  /** Counts a dropped duplicate on the event's marker and keeps the latest (the trace's "duplicate of"). */
  async noteDuplicate(event: EventIdentity, acceptance: EventAcceptance): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [MARKER_KEY]: { S: routedEventKey(event) } },
          UpdateExpression: 'ADD duplicateCount :one SET latestDuplicate = :latest',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#pk': MARKER_KEY },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':latest': acceptanceJson(acceptance) },
        }),
      );
    } catch (error) {
      // The marker expired in between: nothing to note on.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async abandon(event: EventIdentity, claimId: string): Promise<void> {
    await this.updateHeld(event, claimId, 'SET lockExpiresAt = :expired', { ':expired': { N: '0' } });
  }

  /** A claim another attempt took over is theirs now; losing it here is not an error. */
  private async updateHeld(event: EventIdentity, claimId: string, update: string, values: Item): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [MARKER_KEY]: { S: routedEventKey(event) } },
          UpdateExpression: update,
          ConditionExpression: '#state = :routing AND claimId = :claimId',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ...values, ':routing': { S: 'routing' }, ':claimId': { S: claimId } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /**
   * Lists the claims as routed: one write for up to COMMIT_CLAIMS events; kept as long as their
   * markers. The same write keeps where each went (issue 30 item 1): a map of claim id to routes,
   * set whole, as one invocation's batch writes each of its commits once.
   */
  private async commit(commit: string, claims: readonly ClaimedIdentity[], expiresAt: number): Promise<void> {
    const routes = Object.fromEntries(
      claims.flatMap(({ claimId, routes }) => (routes === undefined ? [] : [[claimId, routesValue(routes)]])),
    );
    const keepsRoutes = Object.keys(routes).length > 0;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { [MARKER_KEY]: { S: commit } },
        UpdateExpression: `ADD claims :claims SET #ttl = :ttl${keepsRoutes ? ', routes = :routes' : ''}`,
        ExpressionAttributeNames: { '#ttl': MARKER_TTL },
        ExpressionAttributeValues: {
          ':claims': { SS: claims.map(({ claimId }) => claimId) },
          ':ttl': { N: String(expiresAt) },
          ...(keepsRoutes ? { ':routes': { M: routes } } : {}),
        },
      }),
    );
  }

  /** Whether the marker's claim is listed in its batch's commit (read only when a claim meets an existing marker). */
  private async committed(marker: Item): Promise<boolean> {
    const commit = marker['commit']?.S;
    const claimId = marker['claimId']?.S;
    if (commit === undefined || claimId === undefined) return false;
    return (await this.read({ [MARKER_KEY]: { S: commit } }))?.['claims']?.SS?.includes(claimId) === true;
  }

  private async read(key: Item): Promise<Item | undefined> {
    return (await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true })))
      .Item;
  }
}
