/**
 * The subscription as the API shows it (EDU-13, EDU-14), and what a PATCH merges into. No
 * credential secret, no token hash, ever: of a credential only its type is shown.
 */
import { CREDENTIAL_TYPE_NAMES } from '../credentials/sink-credential.js';
import { effectiveStatus, type Subscription } from './subscription.js';
import { READ_ONLY_MEMBERS } from './subscription-input.js';

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
    ...(expired ? { statusreason: `no consent before ${s.validationExpiresAt}` } : s.statusReason === undefined ? {} : { statusreason: s.statusReason }),
    ...(status === 'suspended' && s.suspendedFor !== undefined ? { suspendedfor: s.suspendedFor } : {}),
    ...(s.allowedRatePerMinute === undefined ? {} : { allowedrate: s.allowedRatePerMinute }),
    ...(status === 'pending' && s.validationExpiresAt ? { validationexpiresat: s.validationExpiresAt } : {}),
    ...(s.retryWindowSeconds === undefined ? {} : { retrywindowseconds: s.retryWindowSeconds }),
    signdeliveries: s.signDeliveries === true,
    ...(s.maxInlineBytes === undefined ? {} : { maxinlinebytes: s.maxInlineBytes }),
    createdat: s.createdAt,
    updatedat: s.updatedAt,
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
