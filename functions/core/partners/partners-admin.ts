/**
 * The partners admin API (issue 12, item 3), scope `admin`: clients with their publish grants
 * (EDU-IN), entitlements (EDU-7) and own quotas (issue 28 item 13), read and changed at run time.
 *
 *   GET    /clients              every partner
 *   GET    /clients/{clientId}   one, with its ETag
 *   PUT    /clients/{clientId}   create (201) or replace (200); `If-Match` / `If-None-Match: *` as preconditions
 *   DELETE /clients/{clientId}   remove (204); `If-Match` as precondition
 *
 * Every change is validated against the whole directory at one revision (publish grants of two
 * clients never overlap, review #15) and stored only at that revision, so two admins changing
 * different clients at once cannot together create an overlap: the second gets a 409 and sends
 * again. The changes run under the Idempotency-Key guard (the app), and each is audited as one
 * log line `client changed` with who (`by`), what (`action`, the client and what it now holds)
 * and when (`at`); the partner itself keeps `updatedBy` and `updatedAt`.
 *
 * Reads here go to the store (seeded first, partner-directory.ts), not to the functions' cache: an
 * admin sees a change at once, the other functions within their refresh interval.
 */
import type { Principal } from '../auth/access-tokens.js';
import { emptyResponse, jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import * as http from './http-mapping.js';
import { loadDirectory, type PartnerSeed } from './partner-directory.js';
import { overlapsWithOthers, zgwSecretContext, type DirectoryState, type Partner } from './partner.js';
import type { CredentialCipher } from '../credentials/sink-credential.js';
import { DirectoryChangedError, DirectoryTooLargeError, type PartnerStore } from './ports.js';

export interface PartnersAdminDependencies {
  readonly store: PartnerStore;
  /** The deploy-time configuration: the directory is seeded from it before the admin reads it. */
  readonly seed: PartnerSeed;
  readonly audit: Log;
  readonly clock?: Clock;
  /** Seals a partner's ZGW secret (issue 34); without it a body with `zgwSecret` is a 500, never stored in the clear. */
  readonly cipher?: CredentialCipher;
}

export class PartnersAdmin {
  constructor(private readonly deps: PartnersAdminDependencies) {}

  async list(): Promise<HttpResponse> {
    const state = await this.load();
    const partners = [...state.partners].sort((a, b) => a.clientId.localeCompare(b.clientId));
    return jsonResponse(200, { clients: partners.map(http.partnerView) });
  }

  /** Throws the 404 for a client not in the directory. */
  async read(clientId: string): Promise<HttpResponse> {
    const state = await this.load();
    const partner = find(state, clientId);
    if (!partner) throw http.notFound(clientId);
    return http.partnerResponse(200, partner);
  }

  /** Throws the 400/415 for a bad body, 412 for a failed precondition, 409 for overlapping grants or a concurrent change. */
  async put(principal: Principal, clientId: string, request: HttpRequest): Promise<HttpResponse> {
    http.checkedClientId(clientId);
    const input = http.readPartnerInput(request);
    const state = await this.load();
    const current = find(state, clientId);
    http.checkPreconditions(request, current);
    const overlaps = overlapsWithOthers(state, clientId, input.publishGrants);
    if (overlaps.length > 0) throw http.grantsOverlap(overlaps);
    const at = new Date(this.now()).toISOString();
    const zgwSecret =
      input.zgwSecret === undefined ? current?.zgwSecret : await this.sealZgwSecret(input.zgwSecret, clientId);
    const partner: Partner = {
      clientId,
      ...(input.description === undefined ? {} : { description: input.description }),
      publishGrants: input.publishGrants,
      entitlements: input.entitlements,
      ...(input.quotas === undefined ? {} : { quotas: input.quotas }),
      ...(zgwSecret === undefined ? {} : { zgwSecret }),
      version: (current?.version ?? 0) + 1,
      createdAt: current?.createdAt ?? at,
      updatedAt: at,
      updatedBy: principal.clientId,
    };
    await this.save(state, [...state.partners.filter((p) => p.clientId !== clientId), partner]);
    this.audit(current ? 'replaced' : 'created', principal, partner, at);
    return http.partnerResponse(current ? 200 : 201, partner);
  }

  /** Throws the 404 for a client not in the directory, 412 for a failed precondition, 409 for a concurrent change. */
  async remove(principal: Principal, clientId: string, request: HttpRequest): Promise<HttpResponse> {
    const state = await this.load();
    const current = find(state, clientId);
    if (!current) throw http.notFound(clientId);
    http.checkPreconditions(request, current);
    await this.save(
      state,
      state.partners.filter((p) => p.clientId !== clientId),
    );
    this.audit('deleted', principal, current, new Date(this.now()).toISOString());
    return emptyResponse(204);
  }

  private sealZgwSecret(secret: string, clientId: string): Promise<string> {
    if (this.deps.cipher === undefined) throw new Error('no credential cipher to seal a ZGW secret with');
    return this.deps.cipher.encrypt(secret, zgwSecretContext(clientId));
  }

  private load(): Promise<DirectoryState> {
    return loadDirectory({ store: this.deps.store, seed: this.deps.seed, log: this.deps.audit }, this.now());
  }

  private async save(state: DirectoryState, partners: readonly Partner[]): Promise<void> {
    try {
      await this.deps.store.save({ ...state, revision: state.revision + 1, partners }, state.revision);
    } catch (error) {
      if (error instanceof DirectoryChangedError) throw http.changedMeanwhile();
      if (error instanceof DirectoryTooLargeError) throw http.directoryFull();
      throw error;
    }
  }

  private audit(action: 'created' | 'replaced' | 'deleted', principal: Principal, partner: Partner, at: string): void {
    this.deps.audit.info('client changed', {
      audit: true,
      action,
      by: principal.clientId,
      at,
      clientId: partner.clientId,
      version: partner.version,
      ...(action === 'deleted'
        ? {}
        : { publishGrants: partner.publishGrants, entitlements: partner.entitlements, quotas: partner.quotas ?? {} }),
    });
  }

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }
}

function find(state: DirectoryState, clientId: string): Partner | undefined {
  return state.partners.find((partner) => partner.clientId === clientId);
}
