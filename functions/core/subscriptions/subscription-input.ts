/**
 * The subscription as clients write it (POST body, or the result of a PATCH merge): checked
 * against its schema (subscription-body.ts, what /openapi.json shows as SubscriptionRequest), then
 * against what no schema says. Read-only members a client may echo back from a GET (`id`,
 * `status`, …) are ignored, as the CloudEvents Subscriptions API says for `id`; anything else is an
 * error, so a typo never silently widens a subscription.
 */
import type { Static } from '@sinclair/typebox';
import type { ContentMode } from '../cloudevents/index.js';
import { schemaIssues } from '../http/json-body.js';
import type { ValidationIssue } from '../http/problems.js';
import type { SinkCredential, SinkCredentialKind, SinkCredentialPolicy } from '../credentials/sink-credential.js';
import { parseFilters, type Filter } from './filters.js';
import { outboundUrlProblem, type OutboundUrlRules } from './outbound-url.js';
export { mergePatch, PatchTooDeepError } from './merge-patch.js';
import { parseOrdering } from './ordering-input.js';
import type { OrderingSettings } from '../ordering/ordering-settings.js';
import { parsePullMembers, PULL_ONLY_MEMBERS, PUSH_ONLY_MEMBERS } from './pull-subscription-input.js';
import { parseSinkCredential } from './sink-credential-input.js';
import { parseAlertContacts, type AlertContacts } from './alert-contacts.js';
import { MIN_RETRY_WINDOW_SECONDS, SUBSCRIPTION_BODY } from './subscription-body.js';
import type { DeliveryMode, PullSettings, ValidationMode } from './subscription.js';

export interface SubscriptionInput {
  readonly delivery: DeliveryMode;
  /** Pull only (then `sink` is empty, `validation` `agreed`, `contentMode` `structured`). */
  readonly pull?: PullSettings;
  readonly sink: string;
  readonly source?: string;
  readonly types?: readonly string[];
  readonly filters?: readonly Filter[];
  readonly contentMode: ContentMode;
  /** Declared by the subscriber; only allowed together with `validation: "agreed"`. */
  readonly batchSupported?: boolean;
  /** Absent only for a PATCH that keeps the stored one (`InputRules.storedCredential`). */
  readonly credential?: SinkCredential;
  readonly validation: ValidationMode;
  readonly retryWindowSeconds?: number;
  readonly signDeliveries?: boolean;
  /** The largest event this subscription takes inline; larger ones carry `dataref` (EDU-1). */
  readonly maxInlineBytes?: number;
  /** Who is told out of band (SELF-3). */
  readonly alerts?: AlertContacts;
  /** Ordered delivery per key (issue 33). */
  readonly ordering?: OrderingSettings;
}

export interface InputRules {
  /** Laptop host: plain http, and any port, to loopback addresses is allowed. */
  readonly allowLoopbackSinks: boolean;
  /** Ports a sink or token URL may name (review item 19). */
  readonly allowedPorts: readonly number[];
  /** Which credential kinds the deployment accepts (WH-3, EDU-4). */
  readonly sinkCredentials: SinkCredentialPolicy;
  /**
   * A PATCH that does not mention `sinkcredential`: the kind of the credential it keeps, if any.
   * A create, or a PATCH that sets or removes the credential, leaves this out.
   */
  readonly storedCredential?: SinkCredentialKind | undefined;
  /** Deliveries cannot be retried beyond the lifetime of their Idempotency-Key (EDU-IDEM-12). */
  readonly maxRetryWindowSeconds: number;
  /** See `OutboundUrlRules.refusedAddressRange`. */
  readonly refusedAddressRange?: ((address: string) => string | undefined) | undefined;
  /** The deployment has a signing key: `signdeliveries` may be true. */
  readonly signingAvailable?: boolean;
  /** The deployment delivers in order per key: `ordering` may be set (issue 33). */
  readonly orderingAvailable?: boolean;
  /** `validation` when the body leaves it out (default `handshake`; see `handshake-policy.ts`). */
  readonly defaultValidation?: ValidationMode;
}

/** What a client may write: the members of SubscriptionRequest. */
export const WRITABLE_MEMBERS = Object.keys(SUBSCRIPTION_BODY.schema.properties) as readonly WritableMember[];
type WritableMember = keyof typeof SUBSCRIPTION_BODY.schema.properties;

export const READ_ONLY_MEMBERS = [
  'id',
  'owner',
  'status',
  'statusreason',
  'suspendedfor',
  'allowedrate',
  'validationexpiresat',
  'validationcallback',
  'warnings',
  'createdat',
  'updatedat',
] as const;

export { MAX_INLINE_BYTES, MIN_INLINE_BYTES } from './subscription-body.js';
/** `source`, `types` and `filters` as JSON (UTF-8) at most; a subscription's item stays far below 400 KB. */
export const MAX_CONDITIONS_BYTES = 128 * 1024;

/**
 * The subscription checked against its schema (SUBSCRIPTION_BODY, what /openapi.json shows) and
 * then against what no schema says; every issue at once, in the order of the members.
 */
export function parseSubscriptionInput(
  body: unknown,
  rules: InputRules,
): { input?: SubscriptionInput; issues: ValidationIssue[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { issues: schemaIssues(SUBSCRIPTION_BODY, body).map((issue) => ({ attribute: '', ...issue })) };
  // Read-only members a client echoes back from a GET are ignored, as the Subscriptions API says for `id`.
  const fields: Record<string, unknown> = Object.fromEntries(
    Object.entries(body).filter(([name]) => !(READ_ONLY_MEMBERS as readonly string[]).includes(name)),
  );
  const issues: ValidationIssue[] = [];
  const add = (attribute: string, rule: string, message: string, requirement = 'EDU-14') =>
    issues.push({ attribute, rule, requirement, message });

  // A JSON string may hold an unpaired surrogate (`"\ud800"`), which no UTF-8 text can: stored,
  // it would be silently replaced, and route keys and URLs cannot be built from it.
  for (const [name, value] of Object.entries(fields)) {
    if (!wellFormedThroughout(value))
      add(name, 'string-characters', `${name} holds a string that is not well-formed Unicode (an unpaired surrogate)`);
  }

  const delivery = fields['delivery'] ?? 'push';
  // A member of the other kind of subscription is refused by name, whatever its value.
  const misplaced = delivery === 'pull' ? PUSH_ONLY_MEMBERS : PULL_ONLY_MEMBERS;
  issues.push(
    ...schemaIssues(SUBSCRIPTION_BODY, fields).filter(
      (issue) => !(misplaced as readonly string[]).includes(issue.attribute ?? ''),
    ),
  );

  const sink = fields['sink'];
  if (delivery !== 'pull') {
    if (typeof sink !== 'string' || sink.length === 0) add('sink', 'required', 'sink, the webhook URL, is required');
    else {
      const problem = outboundUrlProblem(sink, 'sink', urlRulesOf(rules));
      if (problem) add('sink', problem.rule, problem.message, problem.requirement);
    }
  }

  let filters: Filter[] | undefined;
  if (fields['filters'] !== undefined) {
    const parsed = parseFilters(fields['filters']);
    issues.push(...parsed.issues);
    filters = parsed.filters;
  }

  const alerts = parseAlertContacts(fields['alerts'], typeof sink === 'string' ? sink : '', urlRulesOf(rules));
  issues.push(...alerts.issues);

  const pull = delivery === 'pull' ? parsePullMembers(fields, PUSH_ONLY_MEMBERS, add) : undefined;
  const credential = delivery === 'pull' ? undefined : checkPushMembers(fields, rules, issues);

  const ordering = parseOrdering(fields['ordering'], rules.orderingAvailable === true, add);
  const valid = fields as Static<typeof SUBSCRIPTION_BODY.schema>;
  // The conditions are stored in the subscription's item and in each of its route index items:
  // within this budget both stay far below DynamoDB's 400 KB item limit (issue 8, item 1).
  if (
    issues.length === 0 &&
    Buffer.byteLength(JSON.stringify([valid.source, valid.types, filters])) > MAX_CONDITIONS_BYTES
  ) {
    add(
      filters === undefined ? 'types' : 'filters',
      'too-large',
      `source, types and filters together take at most ${MAX_CONDITIONS_BYTES} bytes as JSON`,
    );
  }
  if (issues.length > 0) return { issues: inMemberOrder(issues) };

  const conditions = {
    ...(valid.source === undefined ? {} : { source: valid.source }),
    ...(valid.types === undefined ? {} : { types: valid.types }),
    ...(filters === undefined ? {} : { filters }),
  };
  const maxInline = {
    ...(valid.maxinlinebytes === undefined ? {} : { maxInlineBytes: valid.maxinlinebytes }),
    ...(alerts.contacts === undefined ? {} : { alerts: alerts.contacts }),
    ...(ordering === undefined ? {} : { ordering }),
  };
  if (pull) {
    return {
      input: {
        delivery: 'pull',
        pull,
        sink: '',
        ...conditions,
        contentMode: 'structured',
        validation: 'agreed',
        ...maxInline,
      },
      issues,
    };
  }
  return {
    input: {
      delivery: 'push',
      sink: sink as string,
      ...conditions,
      contentMode: valid.contentmode ?? 'structured',
      ...(valid.batchsupported === undefined ? {} : { batchSupported: valid.batchsupported }),
      ...(credential === undefined ? {} : { credential }),
      validation: valid.validation ?? rules.defaultValidation ?? 'handshake',
      ...(valid.retrywindowseconds === undefined ? {} : { retryWindowSeconds: valid.retrywindowseconds }),
      ...(valid.signdeliveries === true ? { signDeliveries: true } : {}),
      ...maxInline,
    },
    issues,
  };
}

/** What a push subscription's members must be beyond their schema; the credential, when one is given. */
function checkPushMembers(
  fields: Readonly<Record<string, unknown>>,
  rules: InputRules,
  issues: ValidationIssue[],
): SinkCredential | undefined {
  const add = (attribute: string, rule: string, message: string, requirement = 'EDU-14') =>
    issues.push({ attribute, rule, requirement, message });
  for (const name of PULL_ONLY_MEMBERS) {
    if (fields[name] !== undefined)
      add(name, 'pull-only', `${name} is a setting of pull subscriptions ("delivery": "pull")`, 'EDU-17');
  }
  const validation = fields['validation'] ?? rules.defaultValidation ?? 'handshake';
  if (
    fields['batchsupported'] !== undefined &&
    typeof fields['batchsupported'] === 'boolean' &&
    validation !== 'agreed'
  ) {
    add(
      'batchsupported',
      'declared-by-target',
      'with the validation handshake the target itself declares batch support (Accept-Post); batchsupported is only for validation "agreed"',
      'JSON-3',
    );
  }

  const retryWindow = fields['retrywindowseconds'];
  // The schema holds the lower bound; the upper is the deployment's idempotency TTL.
  if (typeof retryWindow === 'number' && Number.isInteger(retryWindow) && retryWindow > rules.maxRetryWindowSeconds) {
    add(
      'retrywindowseconds',
      'range',
      `retrywindowseconds must be an integer from ${MIN_RETRY_WINDOW_SECONDS} to ${rules.maxRetryWindowSeconds}`,
      'EDU-IDEM-12',
    );
  }

  if (fields['signdeliveries'] === true && !rules.signingAvailable) {
    add(
      'signdeliveries',
      'signing-unavailable',
      'this deployment has no signing key (KOERIER_SIGNING_KEYS), so it cannot sign deliveries',
    );
  }

  // WH-3: "the delivery MUST carry a token": no push subscription without a credential.
  if (fields['sinkcredential'] !== undefined && fields['sinkcredential'] !== null) {
    const parsed = parseSinkCredential(fields['sinkcredential'], {
      ...urlRulesOf(rules),
      policy: rules.sinkCredentials,
    });
    issues.push(...parsed.issues);
    return parsed.credential;
  }
  if (rules.storedCredential === undefined) {
    const kinds = rules.sinkCredentials === 'oauth2-only' ? 'CLIENTCREDENTIALS' : 'ACCESSTOKEN or CLIENTCREDENTIALS';
    add(
      'sinkcredential',
      'required',
      `sinkcredential is required: every delivery carries a token for the target (${kinds})`,
      'WH-3',
    );
  } else if (rules.storedCredential === 'bearer' && rules.sinkCredentials === 'oauth2-only') {
    add(
      'sinkcredential',
      'oauth2-only',
      'the stored ACCESSTOKEN credential is no longer accepted here: give a CLIENTCREDENTIALS sinkcredential (EDU-4)',
      'EDU-4',
    );
  }
  return undefined;
}

/** The issues by the member they are about, as SubscriptionRequest lists them; unknown members first. */
function inMemberOrder(issues: readonly ValidationIssue[]): ValidationIssue[] {
  const rank = (issue: ValidationIssue) =>
    (WRITABLE_MEMBERS as readonly string[]).indexOf(/^[^.[]*/.exec(issue.attribute ?? '')![0]);
  return [...issues].sort((a, b) => rank(a) - rank(b));
}

const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Every string in `value` — member names too — well-formed Unicode; walked without recursion. */
function wellFormedThroughout(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (UNPAIRED_SURROGATE.test(next)) return false;
    } else if (typeof next === 'object' && next !== null) {
      for (const [name, member] of Object.entries(next)) {
        if (UNPAIRED_SURROGATE.test(name)) return false;
        pending.push(member);
      }
    }
  }
  return true;
}

/** The rules for the URLs Koerier calls on the subscriber's behalf: the sink and the token URL. */
function urlRulesOf(rules: InputRules): OutboundUrlRules {
  return {
    allowLoopback: rules.allowLoopbackSinks,
    allowedPorts: rules.allowedPorts,
    refusedAddressRange: rules.refusedAddressRange,
  };
}
