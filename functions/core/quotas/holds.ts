/**
 * Counting what a client holds (its pull subscriptions, its running replays) so that two requests
 * at once cannot both take the last place. Each client has one ledger per kind of resource: the
 * ids it holds, each with when it was taken, written only at the version it was read at (a
 * conditional write in DynamoDB: functions/aws/dynamodb-hold-ledger.ts). Two requests that both
 * read N-1 holds cannot both write N: the second's write fails and it reads again, so the count
 * never passes the limit, whatever the number of containers.
 *
 * A ledger may hold ids whose resource is gone (a pull subscription deleted while its release
 * failed, a replay that finished: replays are not released one by one). They are weeded only
 * when the ledger looks full: each entry is then asked `isLive` (a read per entry, at most the
 * limit), and only the live ones count. A hold is taken before its resource is made, so an entry
 * whose resource is not there yet is live while it is young (`isLive` decides what young is).
 */

/** One client's holds of one kind, as stored: id → when it was taken (epoch ms). */
export interface Holds {
  readonly entries: Readonly<Record<string, number>>;
  /** One up per write; the ledger is written only at the version read. */
  readonly version: number;
}

export interface HoldLedger {
  /** Undefined for a ledger never written (strongly consistent). */
  load(key: string): Promise<Holds | undefined>;
  /** Stores `entries` at `expectedVersion + 1` if the ledger is still at `expectedVersion` (0: never written); false when it moved on. */
  save(key: string, entries: Readonly<Record<string, number>>, expectedVersion: number): Promise<boolean>;
}

export interface HoldRequest {
  /** Whose holds of which kind, e.g. `pull-subscriptions/<client id>`. */
  readonly key: string;
  readonly id: string;
  readonly limit: number;
  readonly now: number;
  /** Whether an entry still takes a place; asked only when the ledger looks full. */
  readonly isLive: (id: string, takenAt: number) => Promise<boolean>;
  /** For a ledger never written: what the client held before holds were counted (taken at 0). */
  readonly initial?: () => Promise<readonly string[]>;
}

export type HoldOutcome = { readonly taken: true } | { readonly taken: false; readonly held: number };

/** A ledger under so much contention that no write got through: the request fails (5xx) and may be retried. */
export class HoldContentionError extends Error {
  override name = 'HoldContentionError';
}

const ATTEMPTS = 10;

/** Takes a place for `id` (a repeat for an id held already takes none), or answers how many are held. */
export async function takeHold(ledger: HoldLedger, request: HoldRequest): Promise<HoldOutcome> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stored = await ledger.load(request.key);
    let entries: Record<string, number> = stored
      ? { ...stored.entries }
      : Object.fromEntries((await request.initial?.())?.filter((id) => id !== request.id).map((id) => [id, 0]) ?? []);
    if (Object.hasOwn(entries, request.id)) return { taken: true };
    if (Object.keys(entries).length >= request.limit) {
      entries = await liveOnly(entries, request.isLive);
      const held = Object.keys(entries).length;
      // Nothing is written on a refusal: the weeding is done again by the next request that finds it full.
      if (held >= request.limit) return { taken: false, held };
    }
    if (await ledger.save(request.key, { ...entries, [request.id]: request.now }, stored?.version ?? 0))
      return { taken: true };
  }
  throw new HoldContentionError(`the holds of ${request.key} kept changing`);
}

/** Gives `id`'s place back; nothing when it holds none. */
export async function releaseHold(ledger: HoldLedger, key: string, id: string): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stored = await ledger.load(key);
    if (!stored || !Object.hasOwn(stored.entries, id)) return;
    const { [id]: _released, ...rest } = stored.entries;
    if (await ledger.save(key, rest, stored.version)) return;
  }
  throw new HoldContentionError(`the holds of ${key} kept changing`);
}

async function liveOnly(
  entries: Record<string, number>,
  isLive: HoldRequest['isLive'],
): Promise<Record<string, number>> {
  const verdicts = await Promise.all(
    Object.entries(entries).map(async ([id, takenAt]) => [id, takenAt, await isLive(id, takenAt)] as const),
  );
  return Object.fromEntries(verdicts.filter(([, , live]) => live).map(([id, takenAt]) => [id, takenAt]));
}
