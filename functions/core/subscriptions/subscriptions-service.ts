/**
 * The subscriptions use case (EDU-7, EDU-13, EDU-14), shaped after the CloudEvents Subscriptions
 * API: create, list (own only, paginated), read, change (JSON merge patch), delete — plus the
 * callback through which a webhook target approves asynchronously (WH-4). It orchestrates: the
 * input rules (`subscription-input.ts`), the lifecycle (`lifecycle.ts`), the handshake
 * (`target-validation.ts`), the store, and the HTTP side (`http-mapping.ts`).
 *
 * Rules every operation keeps:
 * - a client sees and changes only its own subscriptions: another client's id answers 404, as an
 *   unknown one does (a client holding `admin` may act on any);
 * - a subscription must stay within its owner's entitlement (403, see `entitlements.ts`), also when
 *   an admin changes it;
 * - credentials are sealed before they are stored and never appear in an answer;
 * - a new sink, or a subscription that is not active, gets the validation handshake before any
 *   event goes to it, unless consent was agreed out of band by a client allowed to say so (WH-5).
 */
import { API_BASE_PATH } from '../http/api-version.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import {
  type CredentialCipher,
  type SinkCredentialKind,
  type SinkCredentialPolicy,
} from '../credentials/sink-credential.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { readIdempotencyKey } from '../idempotency/index.js';
import type { ValidationHandshakePolicy } from '../webhooks/handshake-policy.js';
import { allowedRate, type ValidationTransport } from '../webhooks/validation-handshake.js';
import { approvalTokenMatches } from './approval-token.js';
import { checkEntitlement, type Entitlements } from './entitlements.js';
import * as http from './http-mapping.js';
import * as lifecycle from './lifecycle.js';
import type { PullQueueAdmin } from './pull-queue-admin.js';
import {
  holdPullSubscription,
  releasePullSubscription,
  type PullSubscriptionQuota,
} from './pull-subscription-quota.js';
import { SubscriptionConflictError, type SubscriptionStore } from './store.js';
import { effectiveStatus, type Subscription } from './subscription.js';
import { requestedTerms, subscriptionIdOf, termsOf } from './subscription-terms.js';
import { openHandshake, validateAgain, validateTarget, type TargetValidationContext } from './target-validation.js';
import { listSubscriptions } from './subscription-listing.js';
import { mergePatch, parseSubscriptionInput, PatchTooDeepError, type SubscriptionInput } from './subscription-input.js';
import { view, writableView } from './subscription-view.js';

export interface SubscriptionsSettings {
  /** Laptop host: plain http, and any port, to loopback sinks and token URLs. */
  readonly allowLoopbackSinks: boolean;
  /** Ports a sink or token URL may name (review item 19). */
  readonly allowedPorts: readonly number[];
  /** Refuses a sink or token URL that is a literal private or loopback address at once (400), see `outbound-url.ts`. */
  readonly refusedAddressRange?: (address: string) => string | undefined;
  /** Which sink credentials the deployment accepts (WH-3, EDU-4). */
  readonly sinkCredentials: SinkCredentialPolicy;
  /** `WebHook-Request-Origin`. */
  readonly webhookOrigin: string;
  /** Base of the callback URL; without it no asynchronous approval is offered. */
  readonly publicBaseUrl: string;
  /** How long a target may take to approve through the callback. */
  readonly validationWindowSeconds: number;
  readonly requestRatePerMinute?: number | undefined;
  /** Clients allowed to declare `validation: "agreed"`. */
  readonly validationAgreedClients: readonly string[];
  /** Default `required`; `agreed-for-directory-partners`: every partner's consent is agreed, and its default (`handshake-policy.ts`). */
  readonly validationHandshake?: ValidationHandshakePolicy;
  /** The idempotency TTL: no delivery is retried longer (EDU-IDEM-12). */
  readonly maxRetryWindowSeconds: number;
  /** A signing key is configured, so `signdeliveries` may be true (issue 12, item 6). */
  readonly signingAvailable?: boolean;
  /** The deployment delivers in order per key (issue 33); until then `ordering` is refused. */
  readonly orderingAvailable?: boolean;
}

export interface SubscriptionsDependencies {
  readonly store: SubscriptionStore;
  readonly cipher: CredentialCipher;
  /** The port the handshake's OPTIONS request goes through (`net/validation-transport.ts` in production). */
  readonly sendValidationRequest: ValidationTransport;
  readonly entitlements: Entitlements;
  readonly settings: SubscriptionsSettings;
  readonly clock?: Clock;
  /** Told about every change, with identifiers only (never a sink's query or a credential). */
  readonly audit?: Log;
  /** A pull subscription's queues, made with it and deleted with it (docs/PULL.md). */
  readonly pullQueues?: PullQueueAdmin;
  /** Pull subscriptions per owner (issue 28 item 13); without it they are not counted. */
  readonly pullQuota?: PullSubscriptionQuota;
}

export class SubscriptionsService {
  private readonly clock: Clock;

  constructor(private readonly deps: SubscriptionsDependencies) {
    this.clock = deps.clock ?? systemClock;
  }

  async create(principal: Principal, request: HttpRequest): Promise<HttpResponse> {
    const input = this.parseInput(http.readJson(request, ['application/json']), principal.clientId);
    this.requireAllowed(principal.clientId, input);
    const id = subscriptionIdOf(principal.clientId, readIdempotencyKey(request.headers));
    const now = this.now().toISOString();
    const terms = await termsOf(
      input,
      { id, owner: principal.clientId, createdAt: now, updatedAt: now },
      this.deps.cipher,
    );
    if (terms.pull) {
      // The queues before the record: a pull subscription is active, so routed to, once stored.
      if (await this.deps.store.get(id)) return this.repeatedCreate(terms);
      if (this.deps.pullQuota)
        await holdPullSubscription(this.deps.pullQuota, this.deps.store, principal.clientId, id, this.clock());
      await this.pullQueues().create(id, terms.pull);
    }
    const handshake =
      input.validation === 'agreed' ? undefined : openHandshake(this.now(), this.deps.settings.validationWindowSeconds);
    let subscription: Subscription | undefined;
    try {
      subscription = await this.deps.store.create(
        handshake ? lifecycle.awaitingValidation(terms, handshake.fields) : lifecycle.agreedOnCreate(terms),
      );
    } catch (error) {
      if (!(error instanceof SubscriptionConflictError)) throw error;
      return this.repeatedCreate(terms);
    }
    if (handshake) {
      subscription = await validateTarget(subscription, handshake.token, this.handshakeContext());
      if (!subscription) throw http.deletedMeanwhile(id);
    }
    this.audit('subscription created', subscription);
    return http.subscriptionResponse(201, subscription, this.now(), {
      location: `${API_BASE_PATH}/subscriptions/${subscription.id}`,
    });
  }

  /** The client's own subscriptions, or, for an admin, another client's or every client's (`subscription-listing.ts`). */
  list(principal: Principal, request: HttpRequest): Promise<HttpResponse> {
    return listSubscriptions(this.deps.store, principal, request, this.now());
  }

  async read(principal: Principal, id: string): Promise<HttpResponse> {
    const subscription = await this.ownSubscription(principal, id);
    if (!subscription) throw http.notFound(id);
    return http.subscriptionResponse(200, subscription, this.now());
  }

  async update(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    const patch = http.readMergePatch(request);
    const current = await this.ownSubscription(principal, id);
    if (!current) throw http.notFound(id);
    http.refuseIfAbonnement(current);
    const stale = http.preconditionFailure(request.headers['if-match'], current);
    if (stale) throw stale;
    let merged: Record<string, unknown>;
    try {
      merged = mergePatch(writableView(current), patch) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof PatchTooDeepError) throw http.tooDeep();
      throw error;
    }
    // Without `sinkcredential` in the patch the stored credential stays, and must still be acceptable.
    const input = this.parseInput(
      merged,
      current.owner,
      'sinkcredential' in patch ? undefined : (current.credential?.kind ?? undefined),
    );
    if (input.delivery !== current.delivery) throw http.deliveryImmutable(current.delivery);
    // The rules are the owner's, also when an admin makes the change.
    this.requireAllowed(current.owner, input);
    if (
      current.credential &&
      !('sinkcredential' in patch) &&
      new URL(input.sink).origin !== new URL(current.sink).origin
    ) {
      throw http.credentialNotCarriedOver();
    }

    const changed = await termsOf(
      input,
      { id, owner: current.owner, createdAt: current.createdAt, updatedAt: this.now().toISOString() },
      this.deps.cipher,
    );
    // A PATCH without `sinkcredential` keeps the stored one (for the same origin, checked above); `null` removes it.
    const { credential: newCredential, ...withoutCredential } = changed;
    const credential = 'sinkcredential' in patch ? newCredential : current.credential;
    const terms = { ...withoutCredential, ...(credential ? { credential } : {}) };

    let updated: Subscription;
    try {
      const next = lifecycle.afterChange(terms, current, input.validation, this.now());
      if (next.handshake) {
        const handshake = openHandshake(this.now(), this.deps.settings.validationWindowSeconds);
        const pending = await this.deps.store.save(lifecycle.awaitingValidation(terms, handshake.fields), current);
        const validated = await validateTarget(pending, handshake.token, this.handshakeContext());
        if (!validated) throw http.deletedMeanwhile(id);
        updated = validated;
      } else {
        if (next.draft.pull && JSON.stringify(next.draft.pull) !== JSON.stringify(current.pull))
          await this.pullQueues().update(id, next.draft.pull);
        updated = await this.deps.store.save(next.draft, current);
      }
    } catch (error) {
      if (error instanceof SubscriptionConflictError) throw http.changedMeanwhile(id);
      throw error;
    }
    this.audit('subscription changed', updated);
    return http.subscriptionResponse(200, updated, this.now());
  }

  async remove(principal: Principal, id: string): Promise<HttpResponse> {
    const current = await this.ownSubscription(principal, id);
    if (!current) throw http.notFound(id);
    http.refuseIfAbonnement(current);
    try {
      await this.deps.store.delete(current);
    } catch (error) {
      if (error instanceof SubscriptionConflictError) throw http.changedMeanwhile(id);
      throw error;
    }
    if (current.delivery === 'pull') {
      // The record is gone, so every receive and settle of it answers 404: no lock can be used any more.
      const failed = (what: string) => (error: unknown) =>
        this.deps.audit?.error(what, {
          subscriptionId: id,
          error: error instanceof Error ? error.message : String(error),
        });
      await this.pullQueues().remove(id).catch(failed('pull queues not deleted'));
      // Not given back, the place is weeded out when the owner's quota looks full (pull-subscription-quota.ts).
      if (this.deps.pullQuota)
        await releasePullSubscription(this.deps.pullQuota, current.owner, id).catch(
          failed('pull subscription quota place not released'),
        );
    }
    this.audit('subscription deleted', current);
    // The CloudEvents Subscriptions API's Delete returns the subscription as it was.
    return jsonResponse(200, view(current, this.now()));
  }

  /** Validate again (issue 12 item 8): a pending or rejected subscription's target is asked once more (`target-validation.ts`). */
  async revalidate(principal: Principal, id: string): Promise<HttpResponse> {
    const current = await this.ownSubscription(principal, id);
    if (!current) throw http.notFound(id);
    if (!lifecycle.revalidatable(current, this.now()))
      throw http.notRevalidatable(effectiveStatus(current, this.now()), current.validation);
    const validated = await validateAgain(
      current,
      this.deps.settings.validationWindowSeconds,
      this.handshakeContext(),
    ).catch((error: unknown) => {
      throw error instanceof SubscriptionConflictError ? http.changedMeanwhile(id) : error;
    });
    if (!validated) throw http.deletedMeanwhile(id);
    this.audit('subscription validated again', validated);
    return http.subscriptionResponse(200, validated, this.now());
  }

  /**
   * GET or POST on the `WebHook-Request-Callback` URL: the target (or its administrator, by hand)
   * approves. The secret token in the URL is the only authentication; a wrong one looks exactly
   * like an unknown subscription. Repeating an approval is harmless.
   */
  async approve(id: string, request: HttpRequest): Promise<HttpResponse> {
    const token = request.query['token'] ?? '';
    const current = await this.deps.store.get(id);
    if (!current || !current.validationTokenHash || !approvalTokenMatches(token, current.validationTokenHash))
      throw http.notFound(id);
    const decision = lifecycle.approvalDecision(current, this.now());
    switch (decision.kind) {
      case 'already-active':
        return http.approvedResponse(id);
      case 'not-approvable':
        throw http.notApprovable(decision.status);
      case 'window-closed':
        throw http.approvalWindowClosed();
      case 'approve':
        break;
    }
    const rate = allowedRate(request.headers['webhook-allowed-rate'], this.deps.settings.requestRatePerMinute);
    try {
      const approved = await this.deps.store.save(lifecycle.approvedByCallback(current, rate, this.now()), current);
      this.audit('subscription approved by callback', approved);
    } catch (error) {
      if (error instanceof SubscriptionConflictError) throw http.changedMeanwhile(id);
      throw error;
    }
    return http.approvedResponse(id);
  }

  private parseInput(body: unknown, owner: string, storedCredential?: SinkCredentialKind): SubscriptionInput {
    const { input, issues } = parseSubscriptionInput(body, {
      allowLoopbackSinks: this.deps.settings.allowLoopbackSinks,
      allowedPorts: this.deps.settings.allowedPorts,
      refusedAddressRange: this.deps.settings.refusedAddressRange,
      sinkCredentials: this.deps.settings.sinkCredentials,
      maxRetryWindowSeconds: this.deps.settings.maxRetryWindowSeconds,
      signingAvailable: this.deps.settings.signingAvailable === true,
      orderingAvailable: this.deps.settings.orderingAvailable === true,
      storedCredential,
      defaultValidation: this.agreedByDirectory(owner) ? 'agreed' : 'handshake',
    });
    if (!input) throw http.invalidSubscription(issues);
    return input;
  }

  /** Throws the 403 when the owner may not subscribe to this (EDU-7) or may not skip the handshake (WH-5). */
  private requireAllowed(owner: string, input: SubscriptionInput): void {
    const decision = checkEntitlement(owner, input, this.deps.entitlements);
    if (!decision.entitled) throw http.notEntitled(decision.reason);
    if (
      input.delivery === 'push' &&
      input.validation === 'agreed' &&
      !this.deps.settings.validationAgreedClients.includes(owner) &&
      !this.agreedByDirectory(owner)
    ) {
      throw http.agreementNotAllowed(owner);
    }
  }

  /**
   * An Edukoppeling deployment takes a partner's admission to the directory, with the OAuth2 grant
   * of its target, as consent (`handshake-policy.ts`). The entitlements are the directory's: every
   * partner has an entry, one without grants too.
   */
  private agreedByDirectory(owner: string): boolean {
    return (
      this.deps.settings.validationHandshake === 'agreed-for-directory-partners' && this.deps.entitlements.has(owner)
    );
  }

  /**
   * A create whose id is taken: the id comes from the owner and the Idempotency-Key, so an earlier
   * attempt with this key made it, and its answer was lost or was a 5xx (which frees the key for a
   * retry). That subscription is the answer, unless this request asks for something else (EDU-IDEM-8).
   */
  private async repeatedCreate(requested: lifecycle.SubscriptionTerms): Promise<HttpResponse> {
    const existing = await this.deps.store.get(requested.id);
    if (!existing) throw http.deletedMeanwhile(requested.id);
    if (requestedTerms(existing) !== requestedTerms(requested)) throw http.idempotencyKeyReused(existing.id);
    return http.subscriptionResponse(201, existing, this.now(), {
      location: `${API_BASE_PATH}/subscriptions/${existing.id}`,
    });
  }

  private handshakeContext(): TargetValidationContext {
    return {
      store: this.deps.store,
      send: this.deps.sendValidationRequest,
      settings: this.deps.settings,
      now: () => this.now(),
    };
  }

  private async ownSubscription(principal: Principal, id: string): Promise<Subscription | undefined> {
    const subscription = await this.deps.store.get(id);
    if (!subscription) return undefined;
    return subscription.owner === principal.clientId || hasScope(principal, scopes.admin) ? subscription : undefined;
  }

  private pullQueues(): PullQueueAdmin {
    if (!this.deps.pullQueues) throw new Error('no pull queues configured');
    return this.deps.pullQueues;
  }

  private now(): Date {
    return new Date(this.clock());
  }

  private audit(message: string, subscription: Subscription): void {
    this.deps.audit?.info(message, {
      subscriptionId: subscription.id,
      owner: subscription.owner,
      status: subscription.status,
      validation: subscription.validation,
      // The origin only: a sink's path or query may hold something the subscriber considers secret.
      ...(subscription.delivery === 'push' ? { sinkOrigin: new URL(subscription.sink).origin } : { delivery: 'pull' }),
    });
  }
}
