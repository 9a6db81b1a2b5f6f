/**
 * The subscription as the API shows it (EDU-13, EDU-14), and what a PATCH merges into. No
 * credential secret, no token hash, ever: of a credential only its type is shown.
 */
import { API_BASE_PATH } from '../http/api-version.js';
import { CREDENTIAL_TYPE_NAMES } from '../credentials/sink-credential.js';
import type { ValidationIssue } from '../http/problems.js';
import { effectiveStatus, type Subscription } from './subscription.js';
import { READ_ONLY_MEMBERS } from './subscription-input.js';
import { alertContactsView } from './alert-contacts.js';

export function view(s: Subscription, now: Date): Record<string, unknown> {
  if (s.delivery === 'pull') return pullView(s);
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
    ...(expired
      ? { statusreason: `no consent before ${s.validationExpiresAt}` }
      : s.statusReason === undefined
        ? {}
        : { statusreason: s.statusReason }),
    ...(status === 'suspended' && s.suspendedFor !== undefined ? { suspendedfor: s.suspendedFor } : {}),
    ...(s.allowedRatePerMinute === undefined ? {} : { allowedrate: s.allowedRatePerMinute }),
    ...(status === 'pending' && s.validationExpiresAt ? { validationexpiresat: s.validationExpiresAt } : {}),
    // Where the target approves (issue 12 item 8). Its secret token went to the target alone, in
    // WebHook-Request-Callback: shown here it would let a subscriber approve deliveries to someone else's URL.
    ...(status === 'pending' && s.validation === 'handshake'
      ? { validationcallback: `${API_BASE_PATH}/subscriptions/${encodeURIComponent(s.id)}/validation` }
      : {}),
    ...(s.retryWindowSeconds === undefined ? {} : { retrywindowseconds: s.retryWindowSeconds }),
    signdeliveries: s.signDeliveries === true,
    ...(s.maxInlineBytes === undefined ? {} : { maxinlinebytes: s.maxInlineBytes }),
    ...(s.alerts === undefined ? {} : { alerts: alertContactsView(s.alerts) }),
    ...(s.ordering === undefined ? {} : { ordering: { ...s.ordering } }),
    ...warningsOf(s, status),
    createdat: s.createdAt,
    updatedat: s.updatedAt,
  };
}

/**
 * A clear word when the subscription will not do what it asks (issue 12 item 8): `batch` without
 * a target that declared batch support goes out as single structured events (JSON-3). While the
 * handshake is still out the target may yet declare it, so the word waits for the outcome.
 */
function warningsOf(s: Subscription, status: string): { warnings?: ValidationIssue[] } {
  if (s.contentMode !== 'batch' || s.batchSupported || status === 'pending') return {};
  const how =
    s.validation === 'agreed'
      ? 'set batchsupported to true if the agreement says it takes them'
      : 'the target declares it by answering the validation request with Accept-Post: application/cloudevents-batch+json';
  return {
    warnings: [
      {
        attribute: 'contentmode',
        rule: 'batch-fallback',
        requirement: 'JSON-3',
        message: `contentmode is batch, but the target has not declared batch support, so events are delivered one by one (structured); ${how}`,
      },
    ],
  };
}

/** A pull subscription: no push member (sink, credential, handshake); its queue settings instead. */
function pullView(s: Subscription): Record<string, unknown> {
  return {
    id: s.id,
    owner: s.owner,
    ...(s.source === undefined ? {} : { source: s.source }),
    ...(s.types === undefined ? {} : { types: s.types }),
    ...(s.filters === undefined ? {} : { filters: s.filters }),
    delivery: 'pull',
    maxdeliverycount: s.pull?.maxDeliveryCount,
    retentionseconds: s.pull?.retentionSeconds,
    ...(s.maxInlineBytes === undefined ? {} : { maxinlinebytes: s.maxInlineBytes }),
    ...(s.alerts === undefined ? {} : { alerts: alertContactsView(s.alerts) }),
    ...(s.ordering === undefined ? {} : { ordering: { ...s.ordering } }),
    status: s.status,
    ...(s.statusReason === undefined ? {} : { statusreason: s.statusReason }),
    createdat: s.createdAt,
    updatedat: s.updatedAt,
  };
}

/** What a PATCH merges into: the view's writable members (the credential stays out: it is write-only). */
export function writableView(s: Subscription): Record<string, unknown> {
  const members = view(s, new Date(0));
  for (const name of [...READ_ONLY_MEMBERS, 'sinkcredential']) delete members[name];
  if (s.delivery === 'push' && s.validation !== 'agreed') delete members['batchsupported'];
  return members;
}
