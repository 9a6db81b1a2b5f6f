/**
 * Subscriptions and their route index in one process: a `SubscriptionStore` with the semantics of
 * the DynamoDB one (`functions/aws/dynamodb-subscription-store.ts`; one contract suite runs against
 * both), that the router's matcher can also read as its `RouteIndexReader`. For unit tests and
 * single-process tools; nothing is shared between processes.
 *
 * It lives with routing, not with subscriptions, because it keeps the route index: routing reads
 * subscriptions, so the other way round would make the two areas import each other.
 */
import { systemClock, type Clock } from '../../../functions/core/ports/clock.js';
import { DYNAMODB_LIMITS } from '../../../functions/core/ids/bounded-key.js';
import {
  InvalidCursorError,
  SubscriptionConflictError,
  updateStatusVia,
  type SubscriptionDraft,
  type SubscriptionPage,
  type SubscriptionStore,
} from '../../../functions/core/subscriptions/store.js';
import {
  isRoutable,
  type Subscription,
  type SubscriptionStatus,
  type SuspensionCause,
} from '../../../functions/core/subscriptions/subscription.js';
import {
  routeCandidateOf,
  type RouteCandidate,
  type RouteIndexReader,
  type RouteIndexState,
} from '../../../functions/core/routing/matcher.js';
import { routeEntriesOf, type RouteEntry, type RouteShape } from '../../../functions/core/routing/route-keys.js';

/** Ids the DynamoDB store can key (its route index's sort key); a longer one names no subscription. */
const MAX_ID_BYTES = DYNAMODB_LIMITS.sortKeyBytes;

interface CursorPosition {
  readonly owner: string;
  readonly createdAt: string;
  readonly id: string;
}

export class InMemorySubscriptionStore implements SubscriptionStore, RouteIndexReader {
  readonly #subscriptions = new Map<string, Subscription>();
  /** Shapes ever used: as in DynamoDB they are never removed (a stale one costs an empty lookup). */
  readonly #shapes = new Set<RouteShape>();
  #generation = 0;

  constructor(private readonly clock: Clock = systemClock) {}

  async get(id: string): Promise<Subscription | undefined> {
    if (id.length === 0 || Buffer.byteLength(id) > MAX_ID_BYTES) return undefined;
    const stored = this.#subscriptions.get(id);
    return stored && structuredClone(stored);
  }

  async create(draft: SubscriptionDraft): Promise<Subscription> {
    if (this.#subscriptions.has(draft.id)) throw new SubscriptionConflictError(`subscription ${draft.id} exists`);
    const subscription: Subscription = { ...structuredClone(draft), routeKeys: this.#index(draft), version: 1 };
    this.#subscriptions.set(draft.id, subscription);
    if (subscription.routeKeys.length > 0) this.#generation++;
    return structuredClone(subscription);
  }

  async save(draft: SubscriptionDraft, previous: Subscription): Promise<Subscription> {
    this.#expect(previous);
    const subscription: Subscription = {
      ...structuredClone(draft),
      id: previous.id,
      routeKeys: this.#index(draft),
      version: previous.version + 1,
    };
    this.#subscriptions.set(previous.id, subscription);
    if (subscription.routeKeys.length > 0 || previous.routeKeys.some((key) => !subscription.routeKeys.includes(key)))
      this.#generation++;
    return structuredClone(subscription);
  }

  /** Issue 33, ORD-1: the routable ordered subscriptions that refuse events without their key, as the ingest reads them. */
  async keyRequiringSubscriptions(): Promise<RouteCandidate[]> {
    return [...this.#subscriptions.values()]
      .filter((s) => s.routeKeys.length > 0 && s.ordering?.withoutKey === 'refuse')
      .map((s) => routeCandidateOf(structuredClone(s)));
  }

  async delete(previous: Subscription): Promise<void> {
    this.#expect(previous);
    this.#subscriptions.delete(previous.id);
    if (previous.routeKeys.length > 0) this.#generation++;
  }

  async listByOwner(owner: string, page: { limit: number; cursor?: string | undefined }): Promise<SubscriptionPage> {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, owner);
    const owned = [...this.#subscriptions.values()].filter((s) => s.owner === owner).sort(byCreation);
    const rest = after ? owned.filter((s) => byCreation(s, after) > 0) : owned;
    const items = rest.slice(0, page.limit).map((s) => structuredClone(s));
    const last = items.at(-1);
    return {
      items,
      cursor:
        rest.length > page.limit && last ? encodeCursor({ owner, createdAt: last.createdAt, id: last.id }) : undefined,
    };
  }

  async listAll(page: { limit: number; cursor?: string | undefined }): Promise<SubscriptionPage> {
    let after: string | undefined;
    if (page.cursor !== undefined) {
      // Marked, so no cursor of an owner's list (JSON) and no garbage passes for one of this list.
      const decoded = Buffer.from(page.cursor, 'base64url').toString('utf8');
      if (!decoded.startsWith(ALL_CURSOR_MARK) || decoded.length === ALL_CURSOR_MARK.length)
        throw new InvalidCursorError('the cursor is not one this list handed out');
      after = decoded.slice(ALL_CURSOR_MARK.length);
    }
    const all = [...this.#subscriptions.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const rest = after === undefined ? all : all.filter((s) => s.id > after);
    const items = rest.slice(0, page.limit).map((s) => structuredClone(s));
    const last = items.at(-1);
    return {
      items,
      cursor:
        rest.length > page.limit && last ? Buffer.from(ALL_CURSOR_MARK + last.id).toString('base64url') : undefined,
    };
  }

  async updateStatus(
    id: string,
    status: SubscriptionStatus,
    reason: string | undefined,
    expectedVersion?: number,
    suspendedFor?: SuspensionCause,
  ): Promise<Subscription | undefined> {
    return updateStatusVia(this, this.clock(), id, { status, reason, expectedVersion, suspendedFor });
  }

  async readState(): Promise<RouteIndexState> {
    return { generation: this.#generation, shapes: [...this.#shapes] };
  }

  async candidates(routeKey: string): Promise<RouteCandidate[]> {
    return [...this.#subscriptions.values()].filter((s) => s.routeKeys.includes(routeKey)).map(routeCandidateOf);
  }

  /** The route keys a draft is stored under (none unless routable); registers their shapes. */
  #index(draft: SubscriptionDraft): string[] {
    const entries: RouteEntry[] = isRoutable(draft.status) ? routeEntriesOf(draft) : [];
    for (const entry of entries) this.#shapes.add(entry.shape);
    return entries.map((entry) => entry.routeKey);
  }

  /** Optimistic locking: `previous` must still be what is stored. */
  #expect(previous: Subscription): void {
    if (this.#subscriptions.get(previous.id)?.version !== previous.version)
      throw new SubscriptionConflictError(`subscription ${previous.id} changed meanwhile`);
  }
}

function byCreation(a: Pick<Subscription, 'createdAt' | 'id'>, b: Pick<Subscription, 'createdAt' | 'id'>): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const ALL_CURSOR_MARK = 'all:';

/** The owner travels inside the cursor, so a cursor can never page through another client's list. */
function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function decodeCursor(cursor: string, owner: string): CursorPosition {
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof position === 'object' && position !== null) {
      const { owner: of, createdAt, id } = position as Record<string, unknown>;
      if (of === owner && typeof createdAt === 'string' && typeof id === 'string') return { owner, createdAt, id };
    }
  } catch {
    // falls through to the error below
  }
  throw new InvalidCursorError('the cursor is not one this list handed out');
}
