/**
 * The sending stage (WH-1, WH-3, WH-6, CARD-5): each admitted delivery waits for its rate slot,
 * goes out with the subscription's bearer token, and its answer is judged (WH-2). What an attempt
 * means for the delivery is not decided here but in `settle-attempt.ts`.
 */
import type { Clock } from '../ports/clock.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { judgeAttempt, type AttemptResult } from './attempt-outcome.js';
import type { DeliveryProgress, DeliveryRendering } from './delivery-records.js';
import { CredentialUnavailableError, type DispatcherDependencies, type QueuedDelivery } from './dispatch-ports.js';
import type { AttemptReport } from './settle-attempt.js';
import { requestWithoutToken, withAccessToken, type WebhookRequest } from './webhook-request.js';
import { asRendered } from './frozen-rendering.js';
import { deliverySignatureHeaders } from '../signatures/message-signature.js';

/** The claim check could not give the events' data back, or record the reader: nothing was sent. */
class ClaimCheckFailure extends Error {
  override name = 'ClaimCheckFailure';
}

/** An admitted delivery, ready to go out. */
export interface Sending {
  readonly delivery: QueuedDelivery;
  /** As the first attempt rendered it (EDU-IDEM-11, `frozen-rendering.ts`). */
  readonly rendering: DeliveryRendering;
  /** Its request as it was prepared, but the bearer token. */
  readonly request: WebhookRequest;
  readonly progress?: DeliveryProgress | undefined;
}

export interface AttemptContext {
  readonly deps: Pick<
    DispatcherDependencies,
    'accessToken' | 'send' | 'signingKey' | 'origin' | 'log' | 'policy' | 'outgoingEvents'
  >;
  readonly now: Clock;
  readonly sleep: (ms: number) => Promise<void>;
  /** Epoch ms by which every attempt must be over. */
  readonly deadline: number;
  /** The batch's OAuth2 token, when it was fetched, and the fetch waited for, before the rate slots were planned. */
  readonly token?: Promise<string | undefined> | undefined;
}

/** Sends every admitted delivery after its wait (`waits`, index for index); a report each, in the same order. */
export async function attemptAll(
  subscription: Subscription,
  sending: readonly Sending[],
  waits: readonly number[],
  context: AttemptContext,
): Promise<AttemptReport[]> {
  const { deps, now, sleep } = context;
  const { policy } = deps;
  // One token fetch for the batch, and at most one refresh.
  let token = context.token;
  let refreshed: Promise<string | undefined> | undefined;
  const accessToken = (refresh: boolean) =>
    refresh ? (refreshed ??= deps.accessToken(subscription, { refresh })) : (token ??= deps.accessToken(subscription));
  // The worst case of one attempt: its rate wait, the request, and after a 401 the fetch of a
  // fresh token; and a token fetch before the request unless the batch's token was fetched, and
  // waited for, before the attempts (SubscriptionDispatch does): that fetch is then behind us, in
  // `now()`. Counting it again left an OAuth2 batch a second to prepare in, so one that spent
  // longer (settling ordered lanes, a slow table) put every delivery back unattempted.
  const oauth2 = subscription.credential?.kind === 'oauth2-client-credentials';
  const tokenFetches = oauth2 ? (context.token === undefined ? 2 : 1) : 0;
  const worstCaseMs = tokenFetches * policy.tokenTimeoutMs + policy.sendTimeoutMs;
  const signRequest = async (request: WebhookRequest): Promise<WebhookRequest> => {
    if (!deps.signingKey) throw new Error('no signing key is configured');
    const headers = await deliverySignatureHeaders(
      { method: 'POST', ...request },
      await deps.signingKey(),
      new Date(now()),
    );
    return { ...request, headers: { ...request.headers, ...headers } };
  };
  const credentialFailure = (error: unknown) =>
    error instanceof CredentialUnavailableError ? error : new CredentialUnavailableError(String(error));
  const attemptOne = async (
    { delivery, rendering, request: prepared, progress }: Sending,
    index: number,
  ): Promise<AttemptReport> => {
    const wait = waits[index] ?? 0;
    if (now() + wait + worstCaseMs > context.deadline) return { outOfTime: true };
    if (wait > 0) await sleep(wait);
    const at = now();
    const send = async (): Promise<AttemptResult | CredentialUnavailableError | ClaimCheckFailure> => {
      let bearer: string | undefined;
      try {
        bearer = await accessToken(false);
      } catch (error) {
        return credentialFailure(error);
      }
      // WH-3: nothing goes out without a token (the subscription was checked for a credential already).
      if (!bearer) return new CredentialUnavailableError('the subscription has no sink credential');
      let tokenless = prepared;
      if (deps.outgoingEvents) {
        const { message } = delivery;
        try {
          // Inline or by reference as the first attempt decided: the same key, the same body (EDU-IDEM-11).
          const events = await deps.outgoingEvents(asRendered(subscription, rendering), message.events);
          // Data the claim check put back inline: the prepared request does not carry it.
          if (events.some((event, i) => event !== message.events[i]))
            tokenless = requestWithoutToken({
              message: { ...message, events },
              sink: subscription.sink,
              format: rendering.format,
              origin: deps.origin,
              bodyShape: subscription.bodyShape,
            });
        } catch (error) {
          return new ClaimCheckFailure(String(error));
        }
      }
      // A notificatie is never sent without its data (webhook-request.ts): the claim check did not give it back.
      if (tokenless.awaitsClaimCheckData)
        return new ClaimCheckFailure("the notificatie's data could not be had from the claim check");
      const request = withAccessToken(tokenless, bearer, subscription.credential?.kind === 'authorization');
      if (!subscription.signDeliveries) return deps.send(request);
      // Signed at each attempt, so a retry after a key rotation carries the current key's signature.
      let signed: WebhookRequest;
      try {
        signed = await signRequest(request);
      } catch (error) {
        deps.log.error('delivery not signed', {
          subscriptionId: subscription.id,
          error: error instanceof Error ? error.message : String(error),
        });
        return new CredentialUnavailableError('the delivery could not be signed');
      }
      return deps.send(signed);
    };
    let result = await send();
    // A cached OAuth2 token the target no longer accepts: fetch a fresh one (the token cache
    // keeps it) and try again with it. Not at once: this request used the delivery's rate
    // slot (WH-6). A 401 to the try after a refresh is the target's answer.
    if (
      oauth2 &&
      !(result instanceof Error) &&
      result.status === 401 &&
      progress?.lastAttempts.at(-1)?.status !== 401
    ) {
      try {
        await accessToken(true);
        return {
          at,
          latencyMs: result.latencyMs,
          status: 401,
          ...(result.answer === undefined ? {} : { answer: result.answer }),
          verdict: judgeAttempt(result, now()),
          freshToken: true,
        };
      } catch (error) {
        result = credentialFailure(error);
      }
    }
    if (result instanceof ClaimCheckFailure) {
      deps.log.warn('delivery not sent: claim check unavailable', {
        subscriptionId: subscription.id,
        deliveryId: delivery.message.deliveryId,
        error: result.message,
      });
      return {
        at,
        latencyMs: now() - at,
        verdict: {
          kind: 'failed',
          code: 'claim-check',
          detail: "the event's data could not be read from Koerier's claim check",
        },
      };
    }
    if (result instanceof Error)
      return { at, latencyMs: now() - at, verdict: { kind: 'failed', code: 'credential', detail: result.message } };
    if ('failure' in result) {
      // The transport's own words, which may name an internal address, are for operators only.
      const { subscriptionId, deliveryId } = delivery.message;
      deps.log.warn('delivery attempt failed without an answer', {
        subscriptionId,
        deliveryId,
        failure: result.failure,
        error: result.message,
      });
    }
    return {
      at,
      latencyMs: result.latencyMs,
      ...(result.status === undefined ? {} : { status: result.status }),
      ...(result.answer === undefined ? {} : { answer: result.answer }),
      verdict: judgeAttempt(result, now()),
    };
  };
  // Each attempt's report says how it was rendered: the progress keeps that for the retries (EDU-IDEM-11).
  return Promise.all(
    sending.map(async (item, index) => {
      const report = await attemptOne(item, index);
      return 'outOfTime' in report ? report : { ...report, rendering: item.rendering };
    }),
  );
}
