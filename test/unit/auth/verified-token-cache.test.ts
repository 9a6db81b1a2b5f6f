/**
 * The verified-token cache (issue 15): a client token that passed every check is taken on trust
 * for a short while, and nothing a fresh check would refuse gets through. Real ES256 keys and
 * tokens signed with jose; the key set is a local one behind a getter the test can count and
 * change, and the verification's clock is the test's.
 */
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_RULES } from '../../../functions/core/auth/access-token-rules.js';
import {
  authenticate,
  CLOCK_TOLERANCE_SECONDS,
  scopes,
  type TokenVerification,
} from '../../../functions/core/auth/access-tokens.js';
import {
  MAX_VERIFIED_TOKENS,
  VERIFIED_TOKEN_MAX_AGE_MS,
  VerifiedTokenCache,
} from '../../../functions/core/auth/verified-token-cache.js';
import { asyncRefusalOf } from '../../support/refusals.js';

const ISSUER = 'https://login.example.org';
const AUDIENCE = 'koerier';
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);

let privateKey: CryptoKey;
let publicJwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
});

/** A verification on the test's clock, whose key set counts its lookups and can be swapped. */
function verificationAt(start = T0, audience = AUDIENCE) {
  const state = { now: start, lookups: 0, keys: createLocalJWKSet({ keys: [publicJwk] }) };
  const keys: JWTVerifyGetKey = (header, token) => {
    state.lookups++;
    return state.keys(header, token);
  };
  const verification: TokenVerification = {
    keys,
    issuer: ISSUER,
    audience,
    rules: DEFAULT_ACCESS_TOKEN_RULES,
    get currentDate() {
      return new Date(state.now);
    },
  };
  return { state, verification };
}

function token(
  options: { iatMs?: number; lifetimeSeconds?: number; scope?: string; jti?: string } = {},
): Promise<string> {
  const iat = Math.floor((options.iatMs ?? T0) / 1000);
  return new SignJWT({
    client_id: 'dev-publisher',
    scope: options.scope ?? 'events:publish',
    ...(options.jti === undefined ? {} : { jti: options.jti }),
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.lifetimeSeconds ?? 300))
    .sign(privateKey);
}

/** `compact` with one byte of its signature (decoded) flipped, re-encoded canonically. */
function withFlippedSignatureByte(compact: string, index = 10): string {
  const [header, payload, signature] = compact.split('.');
  const bytes = Buffer.from(signature!, 'base64url');
  bytes[index] = bytes[index]! ^ 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

const publish = (
  compact: string,
  verification: TokenVerification,
  scope: (typeof scopes)[keyof typeof scopes] = scopes.publish,
) => authenticate(`Bearer ${compact}`, scope, verification);

describe('issue 15: verified client tokens are remembered, never past what a fresh check would accept', () => {
  it('issue 15: a token verified once is taken on trust for its next requests, without looking at the key set again', async () => {
    const { state, verification } = verificationAt();
    const compact = await token();
    for (let i = 0; i < 50; i++) expect((await publish(compact, verification)).clientId).toBe('dev-publisher');
    expect(state.lookups).toBe(1);
  });

  it('issue 15, EDU-4: a token with one flipped signature byte is refused after the good one was remembered', async () => {
    const { verification } = verificationAt();
    const compact = await token();
    await publish(compact, verification);
    for (const index of [0, 10, 31, 63]) {
      const refused = await asyncRefusalOf(() => publish(withFlippedSignatureByte(compact, index), verification));
      expect(refused.problem.status).toBe(401);
      expect(refused.problem.detail).toBe('The token signature is invalid.');
    }
    // And the good one is still accepted.
    expect((await publish(compact, verification)).clientId).toBe('dev-publisher');
  });

  it('issue 15, EDU-4: a token with its payload changed is refused after the good one was remembered', async () => {
    const { verification } = verificationAt();
    const compact = await token({ scope: 'events:publish' });
    await publish(compact, verification);
    const [header, payload, signature] = compact.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const widened = Buffer.from(JSON.stringify({ ...claims, scope: 'events:publish admin' })).toString('base64url');
    const refused = await asyncRefusalOf(() =>
      publish(`${header}.${widened}.${signature}`, verification, scopes.admin),
    );
    expect(refused.problem.status).toBe(401);
  });

  it('issue 15, EDU-4: an expired token is refused even when it was remembered', async () => {
    const { state, verification } = verificationAt();
    const compact = await token({ lifetimeSeconds: 120 });
    await publish(compact, verification);
    const expiresAt = T0 + 120_000;
    // Within the skew tolerance past exp the token still passes, but by a fresh check: the entry ended at exp.
    state.now = expiresAt + 1000;
    const lookups = state.lookups;
    expect((await publish(compact, verification)).clientId).toBe('dev-publisher');
    expect(state.lookups).toBe(lookups + 1);
    state.now = expiresAt + CLOCK_TOLERANCE_SECONDS * 1000 + 1000;
    const refused = await asyncRefusalOf(() => publish(compact, verification));
    expect(refused.problem.status).toBe(401);
    expect(refused.problem.detail).toBe('The token has expired.');
  });

  it('issue 15, EDU-4: a key the issuer withdraws stops vouching for a remembered token once the entry is older than the max age', async () => {
    const { state, verification } = verificationAt();
    const compact = await token();
    await publish(compact, verification);
    state.keys = createLocalJWKSet({ keys: [] });
    // The window this cache adds, no longer than the key set's refetch cooldown.
    state.now = T0 + VERIFIED_TOKEN_MAX_AGE_MS - 1;
    expect((await publish(compact, verification)).clientId).toBe('dev-publisher');
    state.now = T0 + VERIFIED_TOKEN_MAX_AGE_MS;
    const refused = await asyncRefusalOf(() => publish(compact, verification));
    expect(refused.problem.status).toBe(401);
    expect(refused.problem.detail).toBe('The token was signed with a key the issuer does not publish.');
  });

  it('issue 15, EDU-4: the scope a route needs is checked on every request, remembered token or not', async () => {
    const { verification } = verificationAt();
    const compact = await token({ scope: 'events:publish' });
    await publish(compact, verification);
    const refused = await asyncRefusalOf(() => publish(compact, verification, scopes.manageSubscriptions));
    expect(refused.problem.status).toBe(403);
  });

  it('issue 15, EDU-4: a token remembered under one verification is checked afresh under another (another audience refuses it)', async () => {
    const compact = await token();
    await publish(compact, verificationAt().verification);
    const refused = await asyncRefusalOf(() => publish(compact, verificationAt(T0, 'another-api').verification));
    expect(refused.problem.detail).toBe('The token is not meant for Koerier (audience).');
  });

  it('issue 15: a refused token is not remembered: it is checked, and refused, every time', async () => {
    const { state, verification } = verificationAt();
    const bad = withFlippedSignatureByte(await token());
    for (let i = 0; i < 3; i++)
      expect((await asyncRefusalOf(() => publish(bad, verification))).problem.status).toBe(401);
    expect(state.lookups).toBe(3);
  });
});

describe('issue 15: the verified-token cache is bounded', () => {
  const principal = { clientId: 'dev-publisher', scopes: new Set(['events:publish']) };
  const farExp = Math.floor(T0 / 1000) + 3600;

  it(`issue 15: past ${MAX_VERIFIED_TOKENS} tokens the oldest is forgotten and the size stays at the bound`, () => {
    const cache = new VerifiedTokenCache<typeof principal>();
    for (let i = 0; i <= MAX_VERIFIED_TOKENS; i++) cache.set(`token-${i}`, principal, farExp, T0);
    expect(cache.size).toBe(MAX_VERIFIED_TOKENS);
    expect(cache.get('token-0', T0)).toBeUndefined();
    expect(cache.get(`token-${MAX_VERIFIED_TOKENS}`, T0)).toBe(principal);
  });

  it('issue 15: an entry is kept until the earlier of exp and the max age, and a token already expired is not kept at all', () => {
    const cache = new VerifiedTokenCache<typeof principal>(10);
    cache.set('short', principal, Math.floor(T0 / 1000) + 5, T0);
    cache.set('long', principal, farExp, T0);
    cache.set('expired', principal, Math.floor(T0 / 1000) - 1, T0);
    expect(cache.size).toBe(2);
    expect(cache.get('short', T0 + 4999)).toBe(principal);
    expect(cache.get('short', T0 + 5000)).toBeUndefined();
    expect(cache.get('long', T0 + VERIFIED_TOKEN_MAX_AGE_MS - 1)).toBe(principal);
    expect(cache.get('long', T0 + VERIFIED_TOKEN_MAX_AGE_MS)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('issue 15: a token whose exp is the very moment of the check is not kept, so it pushes no live token out', () => {
    const cache = new VerifiedTokenCache<typeof principal>(1);
    cache.set('live', principal, farExp, T0);
    cache.set('ending', principal, T0 / 1000, T0);
    expect(cache.get('live', T0)).toBe(principal);
    expect(cache.size).toBe(1);
  });

  it(`issue 15: through authenticate too: after ${MAX_VERIFIED_TOKENS} other tokens, the first is checked against the key set again`, async () => {
    const { state, verification } = verificationAt();
    const tokens = await Promise.all(
      Array.from({ length: MAX_VERIFIED_TOKENS + 1 }, (_, i) => token({ jti: `token-${i}` })),
    );
    for (const compact of tokens) await publish(compact, verification);
    expect(state.lookups).toBe(MAX_VERIFIED_TOKENS + 1);
    await publish(tokens.at(-1)!, verification);
    expect(state.lookups).toBe(MAX_VERIFIED_TOKENS + 1);
    await publish(tokens[0]!, verification);
    expect(state.lookups).toBe(MAX_VERIFIED_TOKENS + 2);
  });
});
