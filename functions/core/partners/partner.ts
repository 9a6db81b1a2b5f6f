/**
 * Partners at run time (issue 12, item 3): a partner is a client id with its publish grants
 * (EDU-IN, which sources it may publish under; publish-grants.ts) and its entitlements (EDU-7,
 * which events it may subscribe to; entitlements.ts). They live in the partner directory, one
 * document read as a whole (ports.ts), so every check across partners — no two clients' grants may
 * overlap (review #15) — sees every partner at one revision and is committed at that revision.
 */
import { overlappingGrants, type GrantOverlap, type PublishGrants } from '../auth/publish-grants.js';
import type { QuotaOverrides } from '../quotas/client-quotas.js';
import type { Entitlements, Grant } from '../subscriptions/entitlements.js';

export interface Partner {
  readonly clientId: string;
  /** Free text for the operators (the organisation, a contact); never read by a rule. */
  readonly description?: string;
  readonly publishGrants: readonly string[];
  readonly entitlements: readonly Grant[];
  /** Its own per-client quotas (issue 28 item 13); the deployment's defaults for those it does not name. */
  readonly quotas?: QuotaOverrides;
  /**
   * The secret it signs ZGW tokens with (issue 34; core/zgw/zgw-tokens.ts), sealed by the credential
   * cipher and bound to the client (`ZGW_SECRET_CONTEXT`): write-only, never answered or logged.
   */
  readonly zgwSecret?: string;
  /** Starts at 1, one up per change: the ETag. */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The client (admin) that made the last change, or `deployment` for a seeded partner. */
  readonly updatedBy: string;
}

/** Every partner at one revision of the directory. */
export interface DirectoryState {
  /** 0 for a directory never written; one up per write. */
  readonly revision: number;
  /** The deploy-time configuration this directory was last seeded from (its canonical JSON), if any. */
  readonly seed?: string;
  readonly partners: readonly Partner[];
}

/** What the functions decide with: the grants, entitlements and own quotas of every partner. */
export interface PartnerSnapshot {
  readonly publishGrants: PublishGrants;
  readonly entitlements: Entitlements;
  /** Only the partners with quotas of their own. */
  readonly quotas: ReadonlyMap<string, QuotaOverrides>;
  /** The sealed ZGW secrets of the partners that have one (issue 34). */
  readonly zgwSecrets?: ReadonlyMap<string, string>;
}

/** What a partner's ZGW secret is sealed for: a ciphertext copied to another client does not open. */
export function zgwSecretContext(clientId: string): Record<string, string> {
  return { purpose: 'koerier-zgw-client-secret', client: clientId };
}

export const EMPTY_DIRECTORY: DirectoryState = { revision: 0, partners: [] };

export function snapshotOf(state: DirectoryState): PartnerSnapshot {
  return {
    publishGrants: Object.fromEntries(state.partners.map((partner) => [partner.clientId, partner.publishGrants])),
    entitlements: new Map(state.partners.map((partner) => [partner.clientId, partner.entitlements])),
    quotas: new Map(
      state.partners.flatMap((partner) => (partner.quotas ? [[partner.clientId, partner.quotas] as const] : [])),
    ),
    zgwSecrets: new Map(
      state.partners.flatMap((partner) => (partner.zgwSecret ? [[partner.clientId, partner.zgwSecret] as const] : [])),
    ),
  };
}

/** The overlaps `publishGrants` of `clientId` would have with the other partners' grants. */
export function overlapsWithOthers(
  state: DirectoryState,
  clientId: string,
  publishGrants: readonly string[],
): GrantOverlap[] {
  const grants: Record<string, readonly string[]> = {};
  for (const partner of state.partners)
    if (partner.clientId !== clientId) grants[partner.clientId] = partner.publishGrants;
  grants[clientId] = publishGrants;
  return overlappingGrants(grants).filter(
    (overlap) => overlap.first.client === clientId || overlap.second.client === clientId,
  );
}

export function describeOverlaps(overlaps: readonly GrantOverlap[]): string {
  return overlaps
    .map(
      ({ first, second }) =>
        `"${first.client}" (grant ${JSON.stringify(first.grant)}) and "${second.client}" (grant ${JSON.stringify(second.grant)})`,
    )
    .join('; ');
}
