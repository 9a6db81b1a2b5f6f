/**
 * The `sinkcredential` member of a subscription as a client writes it (EDU-14, WH-3): checked
 * member by member, the token URL held to the sink's rules. What it yields is a `SinkCredential`
 * (`credentials/sink-credential.ts`), sealed before it is stored.
 */
import type { ValidationIssue } from '../http/problems.js';
import type { SinkCredential, SinkCredentialPolicy } from '../credentials/sink-credential.js';
import { outboundUrlProblem, type OutboundUrlRules } from './outbound-url.js';

const MAX_SECRET_LENGTH = 4096;
/** RFC 6750 b64token: what may follow `Bearer ` in an Authorization header. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The token URL follows the sink's rules (https, allowed ports, plain http to loopback on the laptop). */
export function parseSinkCredential(
  value: unknown,
  rules: OutboundUrlRules & { readonly policy: SinkCredentialPolicy },
  path = 'sinkcredential',
): { credential?: SinkCredential; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const fail = (attribute: string, rule: string, message: string) => {
    issues.push({ attribute, rule, requirement: 'EDU-14', message });
    return { issues };
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail(path, 'object', 'sinkcredential must be an object');
  const fields = value as Record<string, unknown>;
  const text = (name: string, required: boolean): string | undefined => {
    const member = fields[name];
    if (member === undefined && !required) return undefined;
    if (typeof member !== 'string' || member.length === 0 || member.length > MAX_SECRET_LENGTH) {
      issues.push({
        attribute: `${path}.${name}`,
        rule: 'non-empty-string',
        requirement: 'EDU-14',
        message: `${name} must be a non-empty string of at most ${MAX_SECRET_LENGTH} characters`,
      });
      return undefined;
    }
    return member;
  };
  const allowOnly = (allowed: readonly string[]) => {
    for (const name of Object.keys(fields)) {
      if (!allowed.includes(name))
        issues.push({
          attribute: `${path}.${name}`,
          rule: 'unknown-member',
          requirement: 'EDU-14',
          message: `unknown member "${name}"`,
        });
    }
  };

  switch (fields['credentialtype']) {
    case 'ACCESSTOKEN': {
      if (rules.policy === 'oauth2-only') {
        return fail(
          `${path}.credentialtype`,
          'oauth2-only',
          'this deployment accepts only OAuth2 client credentials towards targets: credentialtype must be CLIENTCREDENTIALS (EDU-4)',
        );
      }
      allowOnly(['credentialtype', 'accesstoken']);
      const token = text('accesstoken', true);
      if (token !== undefined && !B64TOKEN.test(token)) {
        return fail(
          `${path}.accesstoken`,
          'b64token',
          'the access token must be usable as a Bearer token (RFC 6750 b64token characters)',
        );
      }
      return issues.length > 0 || token === undefined ? { issues } : { credential: { kind: 'bearer', token }, issues };
    }
    case 'CLIENTCREDENTIALS': {
      allowOnly(['credentialtype', 'tokenurl', 'clientid', 'clientsecret', 'scope', 'audience']);
      const tokenUrl = text('tokenurl', true);
      const clientId = text('clientid', true);
      const clientSecret = text('clientsecret', true);
      const scope = text('scope', false);
      const audience = text('audience', false);
      const urlProblem = tokenUrl === undefined ? undefined : outboundUrlProblem(tokenUrl, 'tokenurl', rules);
      if (urlProblem) issues.push({ attribute: `${path}.tokenurl`, ...urlProblem });
      if (issues.length > 0 || tokenUrl === undefined || clientId === undefined || clientSecret === undefined)
        return { issues };
      return {
        credential: {
          kind: 'oauth2-client-credentials',
          tokenUrl,
          clientId,
          clientSecret,
          ...(scope === undefined ? {} : { scope }),
          ...(audience === undefined ? {} : { audience }),
        },
        issues,
      };
    }
    default:
      return fail(
        `${path}.credentialtype`,
        'enum',
        rules.policy === 'oauth2-only'
          ? 'credentialtype must be CLIENTCREDENTIALS'
          : 'credentialtype must be ACCESSTOKEN or CLIENTCREDENTIALS',
      );
  }
}
