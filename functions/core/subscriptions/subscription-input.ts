/**
 * The subscription as clients write it (POST body, or the result of a PATCH merge), checked
 * member by member. Member names follow the CloudEvents Subscriptions API (lower case: `sink`,
 * `source`, `types`, `filters`, `sinkcredential`, `protocol`), plus Koerier's own `delivery`,
 * `contentmode`, `batchsupported`, `validation`, `retrywindowseconds` and `maxinlinebytes`. Read-only members a
 * client may echo back from a GET (`id`, `status`, …) are ignored, as that API says for `id`;
 * anything else is an error, so a typo never silently widens a subscription.
 */
import { CONTENT_MODES, type ContentMode } from '../cloudevents/index.js';
import type { ValidationIssue } from '../http/problems.js';
import type { SinkCredential, SinkCredentialKind, SinkCredentialPolicy } from '../credentials/sink-credential.js';
import { parseFilters, type Filter } from './filters.js';
import { outboundUrlProblem, type OutboundUrlRules } from './outbound-url.js';
export { mergePatch, PatchTooDeepError } from './merge-patch.js';
import { parsePullMembers, PULL_ONLY_MEMBERS, PUSH_ONLY_MEMBERS } from './pull-subscription-input.js';
import { parseSinkCredential } from './sink-credential-input.js';
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
  /** `validation` when the body leaves it out (default `handshake`; see `handshake-policy.ts`). */
  readonly defaultValidation?: ValidationMode;
}

export const WRITABLE_MEMBERS = [
  'sink',
  'source',
  'types',
  'filters',
  'protocol',
  'delivery',
  'contentmode',
  'batchsupported',
  'sinkcredential',
  'validation',
  'retrywindowseconds',
  'signdeliveries',
  'maxinlinebytes',
  'maxdeliverycount',
  'retentionseconds',
] as const;

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

const VALIDATION_MODES: readonly ValidationMode[] = ['handshake', 'agreed'];
const MAX_TYPES = 32;
const MAX_TEXT = 1024;
const MIN_RETRY_WINDOW_SECONDS = 60;
/** CE-14: an intermediary forwards every event of 64 KiB or less, so no subscription takes less inline. */
export const MIN_INLINE_BYTES = 65_536;
/** What one push delivery may carry inline: Lambda's request limit, the largest event Koerier accepts at all. */
export const MAX_INLINE_BYTES = 6_291_456;
/** `source`, `types` and `filters` as JSON (UTF-8) at most; a subscription's item stays far below 400 KB. */
export const MAX_CONDITIONS_BYTES = 128 * 1024;

export function parseSubscriptionInput(
  body: unknown,
  rules: InputRules,
): { input?: SubscriptionInput; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const add = (attribute: string, rule: string, message: string, requirement = 'EDU-14') =>
    issues.push({ attribute, rule, requirement, message });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    add('', 'object', 'the subscription must be a JSON object');
    return { issues };
  }
  const fields = body as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (
      !(WRITABLE_MEMBERS as readonly string[]).includes(name) &&
      !(READ_ONLY_MEMBERS as readonly string[]).includes(name)
    ) {
      add(name, 'unknown-member', `unknown member "${name}"; writable members: ${WRITABLE_MEMBERS.join(', ')}`);
    }
  }

  // A JSON string may hold an unpaired surrogate (`"\ud800"`), which no UTF-8 text can: stored,
  // it would be silently replaced, and route keys and URLs cannot be built from it.
  for (const [name, value] of Object.entries(fields)) {
    if (!wellFormedThroughout(value))
      add(name, 'string-characters', `${name} holds a string that is not well-formed Unicode (an unpaired surrogate)`);
  }

  const delivery = fields['delivery'] ?? 'push';
  const sink = fields['sink'];
  if (delivery !== 'pull') {
    if (typeof sink !== 'string' || sink.length === 0) add('sink', 'required', 'sink, the webhook URL, is required');
    else {
      const problem = outboundUrlProblem(sink, 'sink', urlRulesOf(rules));
      if (problem) add('sink', problem.rule, problem.message, problem.requirement);
    }
  }

  const source = fields['source'];
  if (source !== undefined && !isText(source))
    add('source', 'non-empty-string', `source must be a non-empty string of at most ${MAX_TEXT} characters`);

  const types = fields['types'];
  if (types !== undefined && (!Array.isArray(types) || types.length > MAX_TYPES || !types.every(isText))) {
    add('types', 'array-of-strings', `types must be an array of at most ${MAX_TYPES} non-empty strings`);
  }

  let filters: Filter[] | undefined;
  if (fields['filters'] !== undefined) {
    const parsed = parseFilters(fields['filters']);
    issues.push(...parsed.issues);
    filters = parsed.filters;
  }

  // Push and pull alike (EDU-1): a pull subscription's receive answer re-inlines up to it too.
  const maxInline = fields['maxinlinebytes'];
  if (
    maxInline !== undefined &&
    (!Number.isInteger(maxInline) ||
      (maxInline as number) < MIN_INLINE_BYTES ||
      (maxInline as number) > MAX_INLINE_BYTES)
  ) {
    add(
      'maxinlinebytes',
      'range',
      `maxinlinebytes must be an integer from ${MIN_INLINE_BYTES} (CE-14) to ${MAX_INLINE_BYTES}`,
      'EDU-1',
    );
  }

  if (delivery === 'pull') {
    const pull = parsePullMembers(fields, PUSH_ONLY_MEMBERS, add);
    if (issues.length === 0 && Buffer.byteLength(JSON.stringify([source, types, filters])) > MAX_CONDITIONS_BYTES) {
      add(
        filters === undefined ? 'types' : 'filters',
        'too-large',
        `source, types and filters together take at most ${MAX_CONDITIONS_BYTES} bytes as JSON`,
      );
    }
    if (issues.length > 0 || !pull) return { issues };
    return {
      input: {
        delivery: 'pull',
        pull,
        sink: '',
        ...(source === undefined ? {} : { source: source as string }),
        ...(types === undefined ? {} : { types: types as string[] }),
        ...(filters === undefined ? {} : { filters }),
        contentMode: 'structured',
        validation: 'agreed',
        ...(maxInline === undefined ? {} : { maxInlineBytes: maxInline as number }),
      },
      issues,
    };
  }
  if (delivery !== 'push') add('delivery', 'enum', 'delivery must be "push" or "pull"', 'EDU-17');
  for (const name of PULL_ONLY_MEMBERS) {
    if (fields[name] !== undefined)
      add(name, 'pull-only', `${name} is a setting of pull subscriptions ("delivery": "pull")`, 'EDU-17');
  }

  if (fields['protocol'] !== undefined && fields['protocol'] !== 'HTTP')
    add('protocol', 'enum', 'protocol must be "HTTP", the only one Koerier delivers with');

  const contentMode = fields['contentmode'] ?? 'structured';
  if (!CONTENT_MODES.includes(contentMode as ContentMode))
    add('contentmode', 'enum', `contentmode must be one of ${CONTENT_MODES.join(', ')}`, 'HTTP-4');

  const validation = fields['validation'] ?? rules.defaultValidation ?? 'handshake';
  if (!VALIDATION_MODES.includes(validation as ValidationMode))
    add('validation', 'enum', `validation must be one of ${VALIDATION_MODES.join(', ')}`, 'WH-5');

  const batchSupported = fields['batchsupported'];
  if (batchSupported !== undefined) {
    if (typeof batchSupported !== 'boolean')
      add('batchsupported', 'boolean', 'batchsupported must be true or false', 'JSON-3');
    else if (validation !== 'agreed') {
      add(
        'batchsupported',
        'declared-by-target',
        'with the validation handshake the target itself declares batch support (Accept-Post); batchsupported is only for validation "agreed"',
        'JSON-3',
      );
    }
  }

  // WH-3: "the delivery MUST carry a token": no push subscription without a credential.
  let credential: SinkCredential | undefined;
  if (fields['sinkcredential'] !== undefined && fields['sinkcredential'] !== null) {
    const parsed = parseSinkCredential(fields['sinkcredential'], {
      ...urlRulesOf(rules),
      policy: rules.sinkCredentials,
    });
    issues.push(...parsed.issues);
    credential = parsed.credential;
  } else if (rules.storedCredential === undefined) {
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

  const retryWindow = fields['retrywindowseconds'];
  if (
    retryWindow !== undefined &&
    (!Number.isInteger(retryWindow) ||
      (retryWindow as number) < MIN_RETRY_WINDOW_SECONDS ||
      (retryWindow as number) > rules.maxRetryWindowSeconds)
  ) {
    add(
      'retrywindowseconds',
      'range',
      `retrywindowseconds must be an integer from ${MIN_RETRY_WINDOW_SECONDS} to ${rules.maxRetryWindowSeconds}`,
      'EDU-IDEM-12',
    );
  }

  const signDeliveries = fields['signdeliveries'];
  if (signDeliveries !== undefined) {
    if (typeof signDeliveries !== 'boolean') add('signdeliveries', 'boolean', 'signdeliveries must be true or false');
    else if (signDeliveries && !rules.signingAvailable) {
      add(
        'signdeliveries',
        'signing-unavailable',
        'this deployment has no signing key (KOERIER_SIGNING_KEYS), so it cannot sign deliveries',
      );
    }
  }

  // The conditions are stored in the subscription's item and in each of its route index items:
  // within this budget both stay far below DynamoDB's 400 KB item limit (issue 8, item 1).
  if (issues.length === 0 && Buffer.byteLength(JSON.stringify([source, types, filters])) > MAX_CONDITIONS_BYTES) {
    add(
      filters === undefined ? 'types' : 'filters',
      'too-large',
      `source, types and filters together take at most ${MAX_CONDITIONS_BYTES} bytes as JSON`,
    );
  }

  if (issues.length > 0) return { issues };
  return {
    input: {
      delivery: 'push',
      sink: sink as string,
      ...(source === undefined ? {} : { source: source as string }),
      ...(types === undefined ? {} : { types: types as string[] }),
      ...(filters === undefined ? {} : { filters }),
      contentMode: contentMode as ContentMode,
      ...(batchSupported === undefined ? {} : { batchSupported: batchSupported as boolean }),
      ...(credential === undefined ? {} : { credential }),
      validation: validation as ValidationMode,
      ...(retryWindow === undefined ? {} : { retryWindowSeconds: retryWindow as number }),
      ...(signDeliveries === true ? { signDeliveries: true } : {}),
      ...(maxInline === undefined ? {} : { maxInlineBytes: maxInline as number }),
    },
    issues,
  };
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

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TEXT;
}

/** The rules for the URLs Koerier calls on the subscriber's behalf: the sink and the token URL. */
function urlRulesOf(rules: InputRules): OutboundUrlRules {
  return {
    allowLoopback: rules.allowLoopbackSinks,
    allowedPorts: rules.allowedPorts,
    refusedAddressRange: rules.refusedAddressRange,
  };
}
