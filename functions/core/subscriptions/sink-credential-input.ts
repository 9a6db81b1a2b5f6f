/**
 * The `sinkcredential` member of a subscription as a client writes it (EDU-14, WH-3): checked
 * against the schema of its credential type, the same the API description shows (issue 29 item
 * 2), and the token URL held to the sink's rules. What it yields is a `SinkCredential`
 * (`credentials/sink-credential.ts`), sealed before it is stored.
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { requestBody, schemaIssues, type RequestBody } from '../http/json-body.js';
import type { ValidationIssue } from '../http/problems.js';
import type { SinkCredential, SinkCredentialPolicy } from '../credentials/sink-credential.js';
import { outboundUrlProblem, type OutboundUrlRules } from './outbound-url.js';

const MAX_SECRET_LENGTH = 4096;
/** RFC 6750 b64token: what may follow `Bearer ` in an Authorization header. */
const B64TOKEN = '^[A-Za-z0-9\\-._~+/]+=*$';

/** A secret member: stored encrypted, never returned, never logged. */
const secret = (options: { readonly pattern?: string; readonly format?: string; readonly description?: string } = {}) =>
  Type.String({ minLength: 1, maxLength: MAX_SECRET_LENGTH, writeOnly: true, ...options });

const ACCESS_TOKEN = Type.Object(
  {
    credentialtype: Type.Literal('ACCESSTOKEN'),
    accesstoken: secret({ pattern: B64TOKEN, description: 'Sent as `Authorization: Bearer` (RFC 6750 b64token).' }),
  },
  { additionalProperties: false, title: 'Static bearer token' },
);

const CLIENT_CREDENTIALS = Type.Object(
  {
    credentialtype: Type.Literal('CLIENTCREDENTIALS'),
    tokenurl: secret({ format: 'uri', description: "The token endpoint; held to the sink's rules (https, WH-1)." }),
    clientid: secret(),
    clientsecret: secret(),
    scope: Type.Optional(secret()),
    audience: Type.Optional(secret()),
  },
  { additionalProperties: false, title: 'OAuth 2.0 client credentials (Koerier fetches tokens from tokenurl)' },
);

const variant = (shape: typeof ACCESS_TOKEN | typeof CLIENT_CREDENTIALS) =>
  requestBody({ schema: shape, problemType: 'invalid-subscription', requirement: 'EDU-14' });

/** The `sinkcredential` member: what the API description shows (`SinkCredential`) and what is checked. */
export const SINK_CREDENTIAL = requestBody({
  schema: Type.Union([ACCESS_TOKEN, CLIENT_CREDENTIALS], {
    description:
      'Required (WH-3: every delivery carries a token). By default only CLIENTCREDENTIALS is accepted (EDU-4); ACCESSTOKEN only where the deployment ' +
      'allows static tokens (KOERIER_SINK_CREDENTIALS=bearer-or-oauth2). Write-only: stored encrypted, never returned (only `credentialtype` is shown), never logged.',
  }),
  problemType: 'invalid-subscription',
  requirement: 'EDU-14',
});

/** Each credential type's own schema, chosen by `credentialtype` so that the issues are that type's. */
const VARIANTS: Readonly<Record<string, RequestBody>> = {
  ACCESSTOKEN: variant(ACCESS_TOKEN),
  CLIENTCREDENTIALS: variant(CLIENT_CREDENTIALS),
};

/** The token URL follows the sink's rules (https, allowed ports, plain http to loopback on the laptop). */
export function parseSinkCredential(
  value: unknown,
  rules: OutboundUrlRules & { readonly policy: SinkCredentialPolicy },
  path = 'sinkcredential',
): { credential?: SinkCredential; issues: ValidationIssue[] } {
  const fail = (attribute: string, rule: string, message: string) => ({
    issues: [{ attribute, rule, requirement: 'EDU-14', message }],
  });
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { issues: schemaIssues(SINK_CREDENTIAL, value, path) };
  const fields = value as Record<string, unknown>;
  const type = fields['credentialtype'];
  if (type === 'ACCESSTOKEN' && rules.policy === 'oauth2-only')
    return fail(
      `${path}.credentialtype`,
      'oauth2-only',
      'this deployment accepts only OAuth2 client credentials towards targets: credentialtype must be CLIENTCREDENTIALS (EDU-4)',
    );
  const schema = typeof type === 'string' && Object.hasOwn(VARIANTS, type) ? VARIANTS[type] : undefined;
  if (schema === undefined)
    return fail(
      `${path}.credentialtype`,
      'enum',
      rules.policy === 'oauth2-only'
        ? 'credentialtype must be CLIENTCREDENTIALS'
        : 'credentialtype must be ACCESSTOKEN or CLIENTCREDENTIALS',
    );
  const issues = schemaIssues(schema, value, path);
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
  const tokenUrl = text('tokenurl');
  // The URL policy is no schema's: checked as well, so one answer names every problem.
  if (
    type === 'CLIENTCREDENTIALS' &&
    tokenUrl !== undefined &&
    !issues.some((i) => i.attribute === `${path}.tokenurl`)
  ) {
    const urlProblem = outboundUrlProblem(tokenUrl, 'tokenurl', rules);
    if (urlProblem) issues.push({ attribute: `${path}.tokenurl`, ...urlProblem });
  }
  if (issues.length > 0) return { issues };
  if (type === 'ACCESSTOKEN') return { credential: { kind: 'bearer', token: text('accesstoken')! }, issues };
  const scope = text('scope');
  const audience = text('audience');
  return {
    credential: {
      kind: 'oauth2-client-credentials',
      tokenUrl: tokenUrl!,
      clientId: text('clientid')!,
      clientSecret: text('clientsecret')!,
      ...(scope === undefined ? {} : { scope }),
      ...(audience === undefined ? {} : { audience }),
    },
    issues,
  };
}
