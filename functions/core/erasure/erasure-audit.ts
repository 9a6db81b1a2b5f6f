/**
 * What an erasure keeps of the person it was about: nothing readable. The audit record names the
 * selector by its kind and a keyed hash (HMAC-SHA256) of its canonical form, so an operator who is
 * asked "was pupil X erased?" can compute the hash of that selector with the deployment's key and
 * find the record, while whoever reads the records cannot try pupil numbers against them without
 * the key (a plain hash of a pupil number is reversed by trying every number).
 */
import { createHmac, hkdfSync } from 'node:crypto';
import type { EventSelector } from './event-selector.js';

/** One deployment secret (32 bytes) serves several purposes; this label gives the audit hash a key of its own. */
const AUDIT_KEY_INFO = 'koerier erasure audit v1';

export function auditKeyFrom(secret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), AUDIT_KEY_INFO, 32));
}

/** `hmac-sha256=:<base64>:` of the selector's canonical JSON (events sorted, so the order given does not matter). */
export function selectorDigest(selector: EventSelector, auditKey: Buffer): string {
  const canonical =
    selector.kind === 'subject'
      ? ['subject', selector.subject]
      : selector.kind === 'events'
        ? [
            'events',
            ...[...selector.events].map((e) => [e.source, e.id]).sort((a, b) => (a.join('\n') < b.join('\n') ? -1 : 1)),
          ]
        : ['data', selector.path, selector.equals];
  return `hmac-sha256=:${createHmac('sha256', auditKey).update(JSON.stringify(canonical)).digest('base64')}:`;
}
