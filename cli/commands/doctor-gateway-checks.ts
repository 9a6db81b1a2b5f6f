/**
 * The doctor's checks of the gateway itself, before anything is made: the API description answers,
 * `/health` (the laptop host serves it; an AWS stack has none), a token per client and the scopes it
 * carries, and a call without a token is refused with a Bearer challenge.
 */
import { randomUUID } from 'node:crypto';
import { toStructuredMessage } from '../../functions/core/cloudevents/http-binding/to-message.js';
import { KoerierClient, type Outcome } from '../api-client.js';
import { gotOf, meaningOfAnswer } from './doctor-meanings.js';
import { answerOfOutcome, postMessage, Skipped, StepFailed, type DoctorRun } from './doctor-run.js';

interface Description {
  openapi?: string;
  info?: { version?: string };
  paths?: Record<string, unknown>;
  components?: { securitySchemes?: Record<string, { flows?: { clientCredentials?: { tokenUrl?: string } } }> };
}

export async function checkDescription(run: DoctorRun): Promise<string> {
  const outcome = await run.plan.anonymous.outcome((api) => api.GET('/openapi.json', { signal: run.plan.signal }));
  const document = (outcome.ok ? outcome.data : undefined) as Description | undefined;
  if (!outcome.ok || typeof document?.openapi !== 'string') {
    const answer = answerOfOutcome(outcome);
    throw new StepFailed(
      gotOf(answer),
      meaningOfAnswer(answer.status === 200 ? { ...answer, status: 404 } : answer, { kind: 'description' }),
    );
  }
  const tokenUrl = Object.values(document.components?.securitySchemes ?? {})
    .map((scheme) => scheme.flows?.clientCredentials?.tokenUrl)
    .find(Boolean);
  const paths = Object.keys(document.paths ?? {}).length;
  return `OpenAPI ${document.openapi}, API ${document.info?.version ?? '?'}, ${paths} paths; token URL ${tokenUrl ?? '(none named)'}`;
}

export async function checkHealth(run: DoctorRun): Promise<string | Skipped> {
  // Not in the API description (the laptop host's own route), so an untyped probe; it answers now or
  // counts as down: no retries.
  const url = new URL('/health', run.plan.gatewayUrl).toString();
  const answer = await new KoerierClient(run.plan.gatewayUrl, undefined, 0).request('GET', url, run.options());
  if (answer.status === 404) {
    return new Skipped(
      'not served here: an AWS stack has no /health (the laptop host serves it); the API description answering is the liveness check',
    );
  }
  const body = answer.json as { status?: string; parts?: Record<string, string> } | undefined;
  const parts = body?.parts ? Object.entries(body.parts).map(([part, state]) => `${part} ${state}`) : [];
  if (answer.status !== 200) {
    const down = parts.filter((part) => !part.endsWith(' ok'));
    throw new StepFailed(
      `${answer.status} ${body?.status ?? answer.text.slice(0, 120)}${parts.length ? ` (${parts.join(', ')})` : ''}`,
      down.length
        ? `the host cannot reach ${down.map((part) => part.split(' ')[0]).join(', ')}: on the laptop the in-process emulator stopped; restart npm start.`
        : meaningOfAnswer(answer, { kind: 'health' }),
    );
  }
  return `${body?.status ?? answer.status}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

export async function checkToken(run: DoctorRun, role: 'publisher' | 'consumer'): Promise<string> {
  const client = role === 'publisher' ? run.plan.publisher : run.plan.consumer;
  // A new token, not the cached one: the point is that the identity provider issues one now.
  const token = await client.tokens.token(true);
  run.tokensOk[role] = true;
  if (!run.separate) run.tokensOk.consumer = true;
  const scopes = scopesOf(token);
  const needs = run.separate
    ? role === 'publisher'
      ? ['events:publish']
      : ['subscriptions:manage', 'events:consume']
    : ['events:publish', 'subscriptions:manage', 'events:consume'];
  if (scopes === undefined) return `issued (not a JWT this CLI can read; scopes unknown)`;
  const missing = needs.filter((scope) => !scopes.includes(scope));
  const listed = `scopes: ${scopes.join(' ') || '(none)'}`;
  return missing.length ? `issued; ${listed}; without ${missing.join(', ')} a later step fails` : `issued; ${listed}`;
}

export async function checkUnauthenticated(run: DoctorRun): Promise<string> {
  const { anonymous, signal } = run.plan;
  const event = run.event('unauthenticated', 0);
  const probes: [string, () => Promise<Outcome<unknown>>][] = [
    [
      'POST /events',
      () =>
        anonymous.outcome((api) => postMessage(api, toStructuredMessage(JSON.stringify(event)), randomUUID(), signal)),
    ],
    ['GET /subscriptions', () => anonymous.outcome((api) => api.GET('/subscriptions', { signal }))],
  ];
  const seen: string[] = [];
  for (const [call, probe] of probes) {
    const answer = answerOfOutcome(await probe());
    const challenge = answer.headers.get('www-authenticate') ?? '';
    if (answer.status !== 401 || !/^Bearer\b/i.test(challenge)) {
      throw new StepFailed(
        `${call} without a token: ${gotOf(answer)}`,
        answer.status < 300
          ? 'the route accepts calls without a token: this must never be; do not put the stack into service (check the function and the API Gateway route).'
          : answer.status === 401
            ? 'a 401 without a Bearer challenge (RFC 6750): something in front of Koerier answered.'
            : meaningOfAnswer(answer, { kind: 'unauthenticated' }),
      );
    }
    seen.push(`${call} 401`);
  }
  return `${seen.join(', ')}, with a Bearer challenge`;
}

/** The scopes a JWT access token carries (`scope`, `scp` or `roles`), or undefined for a token this CLI cannot read. */
function scopesOf(token: string): string[] | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const claim of ['scope', 'scp', 'roles']) {
      const value = claims[claim];
      if (typeof value === 'string') return value.split(' ').filter(Boolean);
      if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
    }
    return [];
  } catch {
    return undefined;
  }
}
