/**
 * The body of PUT /clients/{clientId} (issue 12), one schema (issue 29 item 2): what the admin
 * API checks a partner with (http-mapping.ts's readPartnerInput) and what /openapi.json shows as
 * `ClientInput`. The limits are those the directory has always enforced; the grants' lengths now
 * appear in the description as well.
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (core/http/json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { requestBody } from '../http/json-body.js';
import { QUOTA_BOUNDS, quotaDefaultText, type QuotaName } from '../quotas/client-quotas.js';

const MAX_DESCRIPTION_CHARACTERS = 1024;
const MAX_GRANTS = 100;
const MAX_GRANT_CHARACTERS = 1024;

/** A quota's schema, its bounds and default taken from the code that enforces them. */
function quota(name: QuotaName, what: string) {
  const { min, max } = QUOTA_BOUNDS[name];
  return Type.Optional(
    Type.Integer({ minimum: min, maximum: max, description: `${what}; default ${quotaDefaultText(name)}.` }),
  );
}

export const CLIENT_INPUT_BODY = requestBody({
  schema: Type.Object(
    {
      description: Type.Optional(
        Type.String({
          maxLength: MAX_DESCRIPTION_CHARACTERS,
          description: 'For the operators (organisation, contact); no rule reads it.',
        }),
      ),
      publishGrants: Type.Optional(
        Type.Array(Type.String({ maxLength: MAX_GRANT_CHARACTERS }), {
          maxItems: MAX_GRANTS,
          description:
            'Sources this client may publish under (EDU-IN), by whole segments: `urn:nld:oin:0001` covers `urn:nld:oin:0001:lvs`, not `urn:nld:oin:00012`; ' +
            '`""` covers every source. No source may be covered by grants of two clients (409 otherwise).',
        }),
      ),
      // A grant's other members are left out, as KOERIER_ENTITLEMENTS is read (subscriptions/entitlements.ts).
      entitlements: Type.Optional(
        Type.Array(
          Type.Object({
            typePrefix: Type.String({ maxLength: MAX_GRANT_CHARACTERS, description: '`""` grants every type.' }),
            source: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_GRANT_CHARACTERS })),
          }),
          {
            maxItems: MAX_GRANTS,
            description:
              'Event types (by prefix, optionally from one source) this client may subscribe to and receive (EDU-7).',
          },
        ),
      ),
      zgwSecret: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 512,
          writeOnly: true,
          description:
            'The secret this client signs its ZGW tokens with (HS256; the Notificaties API under /zgw/api/v1, docs/ZGW.md). ' +
            'Write-only: stored encrypted, never answered; a PUT without it keeps the one set before.',
        }),
      ),
      quotas: Type.Optional(
        Type.Object(
          {
            maxPullSubscriptions: quota('maxPullSubscriptions', 'Pull subscriptions (two queues each) it may hold'),
            maxConcurrentReplays: quota('maxConcurrentReplays', 'Replays running at once on its subscriptions'),
            uploadBytesPerHour: quota(
              'uploadBytesPerHour',
              'Bytes of uploads (POST /payloads, the promised sizes) granted to it per clock hour',
            ),
          },
          {
            additionalProperties: false,
            description:
              'This client’s own per-client quotas (issue 28); a quota not named here is the deployment’s default (`koerier:quota*`). ' +
              'Past a count quota the client gets 409 `quota-exceeded`, past the upload quota 429 `quota-exceeded` with Retry-After.',
          },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-client',
  requirement: 'EDU-IN',
});
