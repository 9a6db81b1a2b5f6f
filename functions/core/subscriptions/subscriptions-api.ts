/**
 * The subscriptions API (EDU-7, EDU-13, EDU-14), shaped after the CloudEvents Subscriptions API:
 * create, list (own only, paginated), read, change (JSON merge patch), delete — plus the
 * callback through which a webhook target approves asynchronously (WH-4).
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
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { CREDENTIAL_TYPE_NAMES, sealSinkCredential, type CredentialCipher, type SinkCredentialPolicy } from '../credentials/sink-credential.js';
import { jsonResponse, mediaTypeOf, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { problem, problemResponse, problems } from '../http/problems.js';
import { readIdempotencyKey } from '../idempotency/index.js';
import { uuidFromHash } from '../ids/stable-uuid.js';
import { allowedRate, requestValidation, type ValidationOutcome, type ValidationTransport } from '../webhooks/request-validation.js';
import { checkEntitlement, type Entitlements } from './entitlements.js';
import { InvalidCursorError, SubscriptionConflictError, type SubscriptionDraft, type SubscriptionStore } from './store.js';
import { jsonNestingDepth, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from './json-bounds.js';
import { effectiveStatus, type SinkCredentialKind, type Subscription } from './subscription.js';
import { mergePatch, parseSubscriptionInput, PatchTooDeepError, READ_ONLY_MEMBERS, type SubscriptionInput } from './subscription-input.js';

export interface SubscriptionsApiSettings {
  /** Laptop host: plain http, and any port, to loopback sinks and token URLs. */
  readonly allowLoopbackSinks: boolean;
  /** Ports a sink or token URL may name (review item 19). */
  readonly allowedPorts: readonly number[];
  /** Which sink credentials the deployment accepts (WH-3, EDU-4). */
  readonly sinkCredentials: SinkCredentialPolicy;
  /** `WebHook-Request-Origin`. */
  readonly webhookOrigin: string;
  /** Base of the callback URL; without it no asynchronous approval is offered. */
  readonly publicBaseUrl: string;
  /** How long a target may take to approve through the callback. */
  readonly validationWindowSeconds: number;
  readonly requestRatePerMinute?: number;
  /** Clients allowed to declare `validation: "agreed"`. */
  readonly validationAgreedClients: readonly string[];
  /** The idempotency TTL: no delivery is retried longer (EDU-IDEM-12). */
  readonly maxRetryWindowSeconds: number;
}

export interface SubscriptionsApiDependencies {
  readonly store: SubscriptionStore;
  readonly cipher: CredentialCipher;
  readonly sendValidationRequest: ValidationTransport;
  readonly entitlements: Entitlements;
  readonly settings: SubscriptionsApiSettings;
  readonly clock?: () => Date;
  /** Told about every change, with identifiers only (never a sink's query or a credential). */
  readonly audit?: (message: string, fields: Record<string, unknown>) => void;
}

const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 100;

export class SubscriptionsApi {
  private readonly clock: () => Date;

  constructor(private readonly deps: SubscriptionsApiDependencies) {
    this.clock = deps.clock ?? (() => new Date());
  }

  async create(principal: Principal, request: HttpRequest): Promise<HttpResponse> {
    const body = readJson(request, ['application/json']);
    if ('problem' in body) return body.problem;
    const parsed = this.parseInput(body.value);
    if ('problem' in parsed) return parsed.problem;
    const refusal = this.refusal(principal.clientId, parsed.input);
    if (refusal) return refusal;
    const idempotency = readIdempotencyKey(request.headers);
    if ('problem' in idempotency) return problemResponse(idempotency.problem);

    const id = subscriptionIdOf(principal.clientId, idempotency.key);
    const now = this.clock().toISOString();
    const base = await this.draftFrom(parsed.input, { id, owner: principal.clientId, createdAt: now, updatedAt: now });
    // Stored as pending before the target is asked, so a callback arriving during the OPTIONS
    // request finds the subscription it approves.
    const handshake = parsed.input.validation === 'agreed' ? undefined : this.openHandshake();
    let subscription: Subscription | undefined;
    try {
      subscription = await this.deps.store.create(
        handshake
          ? { ...base, ...handshake.fields, status: 'pending', statusReason: 'the validation request is being sent' }
          : { ...base, status: 'active', statusReason: 'consent agreed out of band (WH-5)' },
      );
    } catch (error) {
      if (!(error instanceof SubscriptionConflictError)) throw error;
      return this.repeatedCreate(base);
    }
    if (handshake) {
      subscription = await this.validateTarget(subscription, handshake.token);
      if (!subscription) return deletedMeanwhile(id);
    }
    this.audit('subscription created', subscription);
    return this.subscriptionResponse(201, subscription, { location: `/subscriptions/${subscription.id}` });
  }

  async list(principal: Principal, request: HttpRequest): Promise<HttpResponse> {
    const limitText = request.query['limit'];
    const limit = limitText === undefined ? DEFAULT_PAGE_SIZE : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
      return problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`));
    }
    try {
      const page = await this.deps.store.listByOwner(principal.clientId, { limit, ...(request.query['cursor'] ? { cursor: request.query['cursor'] } : {}) });
      const now = this.clock();
      const next = page.cursor === undefined ? undefined : `/subscriptions?limit=${limit}&cursor=${encodeURIComponent(page.cursor)}`;
      return jsonResponse(200, { subscriptions: page.items.map((s) => view(s, now)), ...(next ? { next } : {}) }, next ? { link: `<${next}>; rel="next"` } : {});
    } catch (error) {
      if (error instanceof InvalidCursorError) return problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', 'cursor is not one this list handed out.'));
      throw error;
    }
  }

  async read(principal: Principal, id: string): Promise<HttpResponse> {
    const subscription = await this.ownSubscription(principal, id);
    if (!subscription) return notFound(id);
    return this.subscriptionResponse(200, subscription);
  }

  async update(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    const body = readJson(request, ['application/merge-patch+json', 'application/json']);
    if ('problem' in body) return body.problem;
    if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) {
      return problemResponse(problems.badRequest('invalid-subscription', 'Invalid Subscription', 'A PATCH body is a JSON merge patch object (RFC 7396).'));
    }
    const current = await this.ownSubscription(principal, id);
    if (!current) return notFound(id);
    const ifMatch = request.headers['if-match'];
    if (ifMatch !== undefined && ifMatch.trim() !== etagOf(current) && ifMatch.trim() !== '*') {
      return problemResponse(problem(412, 'precondition-failed', 'Precondition Failed', `The subscription is at ${etagOf(current)}, not ${ifMatch.trim()}.`));
    }
    const patch = body.value as Record<string, unknown>;
    let merged: Record<string, unknown>;
    try {
      merged = mergePatch(writableView(current), patch) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof PatchTooDeepError) return tooDeep();
      throw error;
    }
    // Without `sinkcredential` in the patch the stored credential stays, and must still be acceptable.
    const parsed = this.parseInput(merged, 'sinkcredential' in patch ? undefined : (current.credential?.kind ?? undefined));
    if ('problem' in parsed) return parsed.problem;
    // The rules are the owner's, also when an admin makes the change.
    const refusal = this.refusal(current.owner, parsed.input);
    if (refusal) return refusal;
    if (current.credential && !('sinkcredential' in patch) && new URL(parsed.input.sink).origin !== new URL(current.sink).origin) {
      return credentialNotCarriedOver();
    }

    const base = await this.draftFrom(parsed.input, { id, owner: current.owner, createdAt: current.createdAt, updatedAt: this.clock().toISOString() });
    // A PATCH without `sinkcredential` keeps the stored one (for the same origin, checked above); `null` removes it.
    const { credential: newCredential, ...withoutCredential } = base;
    const credential = 'sinkcredential' in patch ? newCredential : current.credential;
    const draft = { ...withoutCredential, ...(credential ? { credential } : {}) };
    // Parsing made sure the credential is acceptable now: a subscription suspended for want of
    // one continues from where it was before (active), or through the handshake for a new sink.
    const reactivating = current.status === 'suspended' && current.suspendedFor === 'credential-required';
    const before = reactivating ? reactivated(current) : current;

    let updated: Subscription;
    try {
      if (parsed.input.validation === 'agreed') {
        const next = agreedStatus(draft, before);
        updated = await this.deps.store.save(reactivating && next.status === 'active' ? { ...next, statusReason: before.statusReason! } : next, current);
      } else if (this.needsHandshake(before, parsed.input)) {
        const handshake = this.openHandshake();
        const pending = await this.deps.store.save({ ...draft, ...handshake.fields, status: 'pending', statusReason: 'the validation request is being sent' }, current);
        const validated = await this.validateTarget(pending, handshake.token);
        if (!validated) return deletedMeanwhile(id);
        updated = validated;
      } else {
        updated = await this.deps.store.save(keepHandshakeState(draft, before), current);
      }
    } catch (error) {
      if (error instanceof SubscriptionConflictError) return changedMeanwhile(id);
      throw error;
    }
    this.audit('subscription changed', updated);
    return this.subscriptionResponse(200, updated);
  }

  async remove(principal: Principal, id: string): Promise<HttpResponse> {
    const current = await this.ownSubscription(principal, id);
    if (!current) return notFound(id);
    try {
      await this.deps.store.delete(current);
    } catch (error) {
      if (error instanceof SubscriptionConflictError) return changedMeanwhile(id);
      throw error;
    }
    this.audit('subscription deleted', current);
    // The CloudEvents Subscriptions API's Delete returns the subscription as it was.
    return jsonResponse(200, view(current, this.clock()));
  }

  /**
   * GET or POST on the `WebHook-Request-Callback` URL: the target (or its administrator, by hand)
   * approves. The secret token in the URL is the only authentication; a wrong one looks exactly
   * like an unknown subscription. Repeating an approval is harmless.
   */
  async approve(id: string, request: HttpRequest): Promise<HttpResponse> {
    const token = request.query['token'] ?? '';
    const current = await this.deps.store.get(id);
    if (!current || !current.validationTokenHash || !sameHash(hashToken(token), current.validationTokenHash)) return notFound(id);
    if (current.status === 'active') return jsonResponse(200, { id, status: 'active' });
    if (current.status !== 'pending' && current.status !== 'rejected') {
      return problemResponse(problem(409, 'subscription-not-approvable', 'Not Approvable', `The subscription is ${current.status}; it cannot be approved now.`));
    }
    if (current.validationExpiresAt && Date.parse(current.validationExpiresAt) < this.clock().getTime()) {
      return problemResponse(problem(410, 'validation-window-closed', 'Approval Window Closed', 'This approval link has expired; the subscriber must validate the sink again.'));
    }
    const rate = allowedRate(request.headers['webhook-allowed-rate'], this.deps.settings.requestRatePerMinute);
    const { statusReason: _reason, allowedRatePerMinute: _rate, ...rest } = withoutStoreFields(current);
    try {
      const approved = await this.deps.store.save(
        {
          ...rest,
          status: 'active',
          statusReason: 'the target approved through the validation callback',
          ...(rate === undefined ? {} : { allowedRatePerMinute: rate }),
          updatedAt: this.clock().toISOString(),
        },
        current,
      );
      this.audit('subscription approved by callback', approved);
    } catch (error) {
      if (error instanceof SubscriptionConflictError) return changedMeanwhile(id);
      throw error;
    }
    return jsonResponse(200, { id, status: 'active' });
  }

  private parseInput(body: unknown, storedCredential?: SinkCredentialKind): { input: SubscriptionInput } | { problem: HttpResponse } {
    const { input, issues } = parseSubscriptionInput(body, {
      allowLoopbackSinks: this.deps.settings.allowLoopbackSinks,
      allowedPorts: this.deps.settings.allowedPorts,
      sinkCredentials: this.deps.settings.sinkCredentials,
      maxRetryWindowSeconds: this.deps.settings.maxRetryWindowSeconds,
      ...(storedCredential === undefined ? {} : { storedCredential }),
    });
    if (!input) return { problem: problemResponse(problems.badRequest('invalid-subscription', 'Invalid Subscription', `The subscription has ${issues.length} error(s); see errors.`, issues)) };
    return { input };
  }

  /** 403 when the owner may not subscribe to this (EDU-7) or may not skip the handshake (WH-5). */
  private refusal(owner: string, input: SubscriptionInput): HttpResponse | undefined {
    const decision = checkEntitlement(owner, input, this.deps.entitlements);
    if (!decision.entitled) return problemResponse(problem(403, 'subscription-not-entitled', 'Not Entitled', `${decision.reason} (EDU-7).`));
    if (input.validation === 'agreed' && !this.deps.settings.validationAgreedClients.includes(owner)) {
      return problemResponse(
        problem(403, 'validation-agreement-not-allowed', 'Validation Agreement Not Allowed', `Client "${owner}" may not skip the validation handshake; no out-of-band agreement is configured for it (WH-5).`),
      );
    }
    return undefined;
  }

  /**
   * A create whose id is taken: the id comes from the owner and the Idempotency-Key, so an earlier
   * attempt with this key made it, and its answer was lost or was a 5xx (which frees the key for a
   * retry). That subscription is the answer, unless this request asks for something else (EDU-IDEM-8).
   */
  private async repeatedCreate(requested: Omit<SubscriptionDraft, 'status'>): Promise<HttpResponse> {
    const existing = await this.deps.store.get(requested.id);
    if (!existing) return deletedMeanwhile(requested.id);
    if (requestedTerms(existing) !== requestedTerms(requested)) {
      return problemResponse(
        problem(422, 'idempotency-key-reused', 'Idempotency Key Reused', `This Idempotency-Key already created subscription ${existing.id} from a different request; a new request needs a new key.`),
      );
    }
    return this.subscriptionResponse(201, existing, { location: `/subscriptions/${existing.id}` });
  }

  private async draftFrom(
    input: SubscriptionInput,
    identity: Pick<Subscription, 'id' | 'owner' | 'createdAt' | 'updatedAt'>,
  ): Promise<Omit<SubscriptionDraft, 'status'>> {
    return {
      ...identity,
      sink: input.sink,
      ...(input.source === undefined ? {} : { source: input.source }),
      ...(input.types === undefined ? {} : { types: input.types }),
      ...(input.filters === undefined ? {} : { filters: input.filters }),
      delivery: 'push',
      contentMode: input.contentMode,
      batchSupported: input.validation === 'agreed' && input.batchSupported === true,
      ...(input.credential === undefined ? {} : { credential: await sealSinkCredential(input.credential, identity.id, this.deps.cipher) }),
      validation: input.validation,
      ...(input.retryWindowSeconds === undefined ? {} : { retryWindowSeconds: input.retryWindowSeconds }),
    };
  }

  /** A new sink, a switch to the handshake, or a subscription not (about to be) receiving: ask the target. */
  private needsHandshake(current: Subscription, input: SubscriptionInput): boolean {
    if (input.sink !== current.sink || current.validation === 'agreed') return true;
    const status = effectiveStatus(current, this.clock());
    return status === 'rejected' || status === 'retired';
  }

  private openHandshake(): { token: string; fields: Pick<Subscription, 'validationTokenHash' | 'validationExpiresAt'> } {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.clock().getTime() + this.deps.settings.validationWindowSeconds * 1000).toISOString();
    return { token, fields: { validationTokenHash: hashToken(token), validationExpiresAt: expiresAt } };
  }

  /** Sends the validation request and stores what the target said; undefined when the subscription was deleted meanwhile. */
  private async validateTarget(pending: Subscription, token: string): Promise<Subscription | undefined> {
    const { publicBaseUrl, webhookOrigin, requestRatePerMinute } = this.deps.settings;
    const callbackUrl = publicBaseUrl ? `${publicBaseUrl}/subscriptions/${pending.id}/validation?token=${token}` : undefined;
    const outcome = await requestValidation(
      {
        sink: pending.sink,
        origin: webhookOrigin,
        ...(callbackUrl ? { callbackUrl } : {}),
        ...(requestRatePerMinute === undefined ? {} : { requestedRatePerMinute: requestRatePerMinute }),
      },
      this.deps.sendValidationRequest,
    );
    let current = pending;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deps.store.save(this.afterValidation(current, outcome, callbackUrl !== undefined), current);
      } catch (error) {
        if (!(error instanceof SubscriptionConflictError) || attempt > 0) throw error;
        // The target approved through the callback while we were still waiting for its answer.
        const latest = await this.deps.store.get(pending.id);
        if (!latest || latest.status === 'active' || latest.validationTokenHash !== pending.validationTokenHash) return latest;
        current = latest;
      }
    }
  }

  private afterValidation(current: Subscription, outcome: ValidationOutcome, callbackOffered: boolean): SubscriptionDraft {
    const { statusReason: _reason, allowedRatePerMinute: _rate, ...rest } = withoutStoreFields(current);
    const base = { ...rest, updatedAt: this.clock().toISOString() };
    const window = current.validationExpiresAt;
    switch (outcome.verdict) {
      case 'consented':
        return {
          ...base,
          status: 'active',
          statusReason: outcome.reason,
          batchSupported: outcome.batchSupported,
          ...(outcome.allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute: outcome.allowedRatePerMinute }),
        };
      case 'refused':
        return { ...base, status: 'rejected', statusReason: `${outcome.reason}${callbackOffered ? `; it can still be approved through the callback until ${window}` : ''}` };
      case 'undecided':
        return callbackOffered
          ? { ...base, status: 'pending', statusReason: `${outcome.reason}; waiting for approval through the callback until ${window}` }
          : { ...base, status: 'rejected', statusReason: `${outcome.reason}; no callback is offered, so there is no consent` };
    }
  }

  private async ownSubscription(principal: Principal, id: string): Promise<Subscription | undefined> {
    const subscription = await this.deps.store.get(id);
    if (!subscription) return undefined;
    return subscription.owner === principal.clientId || hasScope(principal, scopes.admin) ? subscription : undefined;
  }

  private subscriptionResponse(status: number, subscription: Subscription, headers: Record<string, string> = {}): HttpResponse {
    return jsonResponse(status, view(subscription, this.clock()), { etag: etagOf(subscription), ...headers });
  }

  private audit(message: string, subscription: Subscription): void {
    this.deps.audit?.(message, {
      subscriptionId: subscription.id,
      owner: subscription.owner,
      status: subscription.status,
      validation: subscription.validation,
      // The origin only: a sink's path or query may hold something the subscriber considers secret.
      sinkOrigin: new URL(subscription.sink).origin,
    });
  }
}

/** The subscription as the API shows it. No credential secret, no token hash, ever. */
export function view(s: Subscription, now: Date): Record<string, unknown> {
  const status = effectiveStatus(s, now);
  const expired = status !== s.status;
  return {
    id: s.id,
    owner: s.owner,
    sink: s.sink,
    protocol: 'HTTP',
    ...(s.source === undefined ? {} : { source: s.source }),
    ...(s.types === undefined ? {} : { types: s.types }),
    ...(s.filters === undefined ? {} : { filters: s.filters }),
    delivery: s.delivery,
    contentmode: s.contentMode,
    batchsupported: s.batchSupported,
    ...(s.credential ? { sinkcredential: { credentialtype: CREDENTIAL_TYPE_NAMES[s.credential.kind] } } : {}),
    validation: s.validation,
    status,
    ...(expired ? { statusreason: `no consent before ${s.validationExpiresAt}` } : s.statusReason === undefined ? {} : { statusreason: s.statusReason }),
    ...(status === 'suspended' && s.suspendedFor !== undefined ? { suspendedfor: s.suspendedFor } : {}),
    ...(s.allowedRatePerMinute === undefined ? {} : { allowedrate: s.allowedRatePerMinute }),
    ...(status === 'pending' && s.validationExpiresAt ? { validationexpiresat: s.validationExpiresAt } : {}),
    ...(s.retryWindowSeconds === undefined ? {} : { retrywindowseconds: s.retryWindowSeconds }),
    createdat: s.createdAt,
    updatedat: s.updatedAt,
  };
}

/** What a PATCH merges into: the view's writable members (the credential stays out: it is write-only). */
function writableView(s: Subscription): Record<string, unknown> {
  const members = view(s, new Date(0));
  for (const name of [...READ_ONLY_MEMBERS, 'sinkcredential']) delete members[name];
  if (s.validation !== 'agreed') delete members['batchsupported'];
  return members;
}

/**
 * A subscription suspended for want of a credential, as it was before: active. What was parked
 * meanwhile stays with the dead letters until the owner redrives it (the subscriptions function
 * has no access to the deliveries; a redrive re-checks entitlement and filters anyway).
 */
function reactivated(current: Subscription): Subscription {
  const { suspendedFor: _cause, ...rest } = current;
  return {
    ...rest,
    status: 'active',
    statusReason: `a sink credential was set and deliveries resume; send what was held meanwhile with POST /subscriptions/${current.id}/dead-letters/redrive`,
  };
}

function withoutStoreFields(s: Subscription): SubscriptionDraft {
  const { routeKeys: _keys, version: _version, ...draft } = s;
  return draft;
}

/** With the handshake done earlier and the sink unchanged, the target's answers still hold. */
function keepHandshakeState(draft: Omit<SubscriptionDraft, 'status'>, current: Subscription): SubscriptionDraft {
  return {
    ...draft,
    status: current.status,
    batchSupported: current.batchSupported,
    ...(current.statusReason === undefined ? {} : { statusReason: current.statusReason }),
    ...(current.suspendedFor === undefined ? {} : { suspendedFor: current.suspendedFor }),
    ...(current.allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute: current.allowedRatePerMinute }),
    ...(current.validationTokenHash === undefined ? {} : { validationTokenHash: current.validationTokenHash }),
    ...(current.validationExpiresAt === undefined ? {} : { validationExpiresAt: current.validationExpiresAt }),
  };
}

/**
 * Agreed out of band: active, unless the delivery function has suspended it, or retired it because
 * the target answered 410 Gone (WH-2) — final for that sink, so only another sink revives it.
 */
function agreedStatus(draft: Omit<SubscriptionDraft, 'status'>, current: Subscription): SubscriptionDraft {
  if (current.status === 'suspended' || (current.status === 'retired' && draft.sink === current.sink)) {
    return {
      ...draft,
      status: current.status,
      ...(current.statusReason ? { statusReason: current.statusReason } : {}),
      ...(current.suspendedFor ? { suspendedFor: current.suspendedFor } : {}),
    };
  }
  return { ...draft, status: 'active', statusReason: 'consent agreed out of band (WH-5)' };
}

function readJson(request: HttpRequest, mediaTypes: readonly string[]): { value: unknown } | { problem: HttpResponse } {
  const mediaType = mediaTypeOf(request.headers['content-type']);
  if (!mediaTypes.includes(mediaType)) {
    return { problem: problemResponse(problems.unsupportedMediaType(`Send the subscription as ${mediaTypes.join(' or ')}.`)) };
  }
  // Bounded before anything walks it (review item 9): every later step may recurse.
  if (request.body.length > MAX_JSON_BODY_BYTES) {
    return { problem: problemResponse(problems.payloadTooLarge(`A subscription body is at most ${MAX_JSON_BODY_BYTES} bytes.`)) };
  }
  const text = request.body.toString('utf8');
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH) return { problem: tooDeep() };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { problem: problemResponse(problems.badRequest('malformed-json', 'Malformed JSON', 'The request body is not valid JSON.')) };
  }
}

function tooDeep(): HttpResponse {
  return problemResponse(problems.badRequest('json-too-deep', 'JSON Nested Too Deeply', `Objects and arrays nest at most ${MAX_JSON_DEPTH} levels in a subscription.`));
}

function etagOf(subscription: Subscription): string {
  return `"${subscription.version}"`;
}

function notFound(id: string): HttpResponse {
  return problemResponse(problems.notFound(`There is no subscription ${id} for this client.`));
}

function deletedMeanwhile(id: string): HttpResponse {
  return problemResponse(problems.notFound(`Subscription ${id} was deleted while this request was processed.`));
}

/**
 * A credential goes only to the origin it was given for. Kept across a move of the sink to another
 * origin, it would reach whoever runs that one, whom the credential's issuer need not trust.
 */
function credentialNotCarriedOver(): HttpResponse {
  const message = 'the sink moves to another origin, and the stored credential does not go with it: give sinkcredential again, or null for none';
  return problemResponse(
    problems.badRequest('invalid-subscription', 'Invalid Subscription', `The subscription has 1 error(s); see errors.`, [
      { attribute: 'sinkcredential', rule: 'required-for-new-origin', requirement: 'EDU-14', message },
    ]),
  );
}

/**
 * An id in UUIDv4 form (RFC 9562: version 4, variant 10) derived from the owner and the
 * Idempotency-Key, itself a random UUIDv4: a retried create lands on the same id, and no other
 * client's key can produce it.
 */
function subscriptionIdOf(owner: string, idempotencyKey: string): string {
  return uuidFromHash(createHash('sha256').update(JSON.stringify(['subscription', owner, idempotencyKey])));
}

/** What a create asked for (not what the handshake later found), to tell its retry from another request. */
function requestedTerms(s: Omit<SubscriptionDraft, 'status'>): string {
  return JSON.stringify([s.owner, s.sink, s.source, s.types, s.filters, s.contentMode, s.validation, s.validation === 'agreed' && s.batchSupported, s.retryWindowSeconds, s.credential?.kind]);
}

function changedMeanwhile(id: string): HttpResponse {
  return problemResponse(problem(409, 'subscription-changed', 'Conflict', `Subscription ${id} changed while this request was processed; read it and try again.`));
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
