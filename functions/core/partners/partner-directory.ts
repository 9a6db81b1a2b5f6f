/**
 * The partner directory as the functions read it: a cached snapshot of every partner's publish
 * grants and entitlements, read again once it is older than the refresh interval. So a change made
 * through the admin API (partners-admin.ts) takes effect in every running function within that
 * interval (at most a minute: KOERIER_PARTNERS_REFRESH_SECONDS), without a redeploy or a restart.
 *
 * Seeding: the deploy-time configuration (KOERIER_PUBLISHERS and KOERIER_ENTITLEMENTS, from the CDK
 * context or koerier.local.json) only seeds the directory. On a read that finds the directory
 * seeded from other configuration than this function's (or never seeded), each configured client
 * the directory lacks is added, and the configuration is recorded as the directory's seed. A
 * partner already in the directory is never overwritten, so changes made through the admin API
 * survive deploys; a client deleted through the API comes back only when a deploy changes the
 * seeding configuration (remove it from the context too). The same code seeds on both hosts:
 * the first read after a deploy (or after the laptop host starts) does it.
 */
import type { PublishGrants } from '../auth/publish-grants.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import {
  describeOverlaps,
  overlapsWithOthers,
  snapshotOf,
  type DirectoryState,
  type Partner,
  type PartnerSnapshot,
} from './partner.js';
import { DirectoryChangedError, type PartnerStore } from './ports.js';

/** The deploy-time configuration the directory is seeded from. */
export interface PartnerSeed {
  readonly publishGrants: PublishGrants;
  readonly entitlements: Entitlements;
}

export interface PartnerDirectoryDependencies {
  readonly store: PartnerStore;
  readonly seed: PartnerSeed;
  /** How long a snapshot is used before the directory is read again. */
  readonly refreshMs: number;
  readonly clock: Clock;
  readonly log: Log;
}

export const SEEDED_BY = 'deployment';

export class PartnerDirectory {
  private cached: { readonly snapshot: PartnerSnapshot; readonly readAt: number } | undefined;
  private reading: Promise<PartnerSnapshot> | undefined;

  constructor(private readonly deps: PartnerDirectoryDependencies) {}

  /** Every partner's grants as of at most `refreshMs` ago; reads the directory (seeding it first if needed) when the cache is older. */
  async current(): Promise<PartnerSnapshot> {
    const now = this.deps.clock();
    if (this.cached && now - this.cached.readAt < this.deps.refreshMs) return this.cached.snapshot;
    // Concurrent requests of one container share one read.
    this.reading ??= this.read(now).finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(now: number): Promise<PartnerSnapshot> {
    const state = await loadDirectory(this.deps, now);
    const snapshot = snapshotOf(state);
    this.cached = { snapshot, readAt: now };
    return snapshot;
  }
}

export type SeedingDependencies = Pick<PartnerDirectoryDependencies, 'store' | 'seed' | 'log'>;

/**
 * The directory with this deployment's seed applied (stored when that changed anything). The
 * functions' cache and the admin API both read through it, so an admin never sees, or changes, a
 * directory the deployment has not seeded yet.
 */
export async function loadDirectory(deps: SeedingDependencies, now: number): Promise<DirectoryState> {
  return seeded(deps, await deps.store.load(), now);
}

/** Never overwrites a partner. */
async function seeded(deps: SeedingDependencies, loaded: DirectoryState, now: number): Promise<DirectoryState> {
  const seedText = canonicalSeed(deps.seed);
  if (loaded.seed === seedText) return loaded;
  let state: DirectoryState = { revision: loaded.revision + 1, seed: seedText, partners: [...loaded.partners] };
  const at = new Date(now).toISOString();
  const added: string[] = [];
  for (const clientId of seedClients(deps.seed)) {
    if (state.partners.some((partner) => partner.clientId === clientId)) continue;
    const publishGrants = Object.hasOwn(deps.seed.publishGrants, clientId) ? deps.seed.publishGrants[clientId]! : [];
    const overlaps = overlapsWithOthers(state, clientId, publishGrants);
    if (overlaps.length > 0) {
      // A partner added at run time took these sources: the configuration gives way.
      deps.log.error('partner not seeded: its publish grants overlap a partner in the directory', {
        clientId,
        overlaps: describeOverlaps(overlaps),
      });
      continue;
    }
    const partner: Partner = {
      clientId,
      publishGrants,
      entitlements: deps.seed.entitlements.get(clientId) ?? [],
      version: 1,
      createdAt: at,
      updatedAt: at,
      updatedBy: SEEDED_BY,
    };
    state = { ...state, partners: [...state.partners, partner] };
    added.push(clientId);
  }
  try {
    await deps.store.save(state, loaded.revision);
  } catch (error) {
    // Another function seeded (or an admin changed) it meanwhile: use what is there now; the next read seeds again if needed.
    if (error instanceof DirectoryChangedError) return deps.store.load();
    throw error;
  }
  deps.log.info('partner directory seeded from the deployment configuration', {
    by: SEEDED_BY,
    added,
    revision: state.revision,
  });
  return state;
}

function seedClients(seed: PartnerSeed): string[] {
  return [...new Set([...Object.keys(seed.publishGrants), ...seed.entitlements.keys()])].sort();
}

/** The same configuration gives the same text, however its keys were ordered. */
export function canonicalSeed(seed: PartnerSeed): string {
  return JSON.stringify(
    seedClients(seed).map((clientId) => [
      clientId,
      Object.hasOwn(seed.publishGrants, clientId) ? seed.publishGrants[clientId] : [],
      seed.entitlements.get(clientId) ?? [],
    ]),
  );
}
