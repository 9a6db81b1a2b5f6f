/**
 * Authentication as ZGW clients do it (issue 34; the "JWT-Claims" scheme of the Notificaties API):
 * the client signs its own JWT with HS256 and the secret it shares with Koerier, naming itself in
 * `client_id` and the signing time in `iat`. There is no `exp`: a token is refused once `iat` is
 * older than the maximum age (default one hour, `KOERIER_ZGW_MAX_TOKEN_AGE_SECONDS`).
 *
 * The scopes are not in the token: Open Notificaties looks them up in the Autorisaties API, Koerier
 * reads them off the partner (`ZgwClientRecord.scopes`): `notificaties.publiceren` for a partner
 * with publish grants, `notificaties.consumeren` for one with entitlements (./zgw-clients.ts).
 * Every refusal is a 403 `Fout` with vng-api-common's code, as Open Notificaties answers it.
 */
import { decodeJwt, errors as joseErrors, jwtVerify } from 'jose';
import { zgwRefusal } from './zgw-problems.js';

export const zgwScopes = {
  publiceren: 'notificaties.publiceren',
  consumeren: 'notificaties.consumeren',
} as const;
export type ZgwScope = (typeof zgwScopes)[keyof typeof zgwScopes];

/** What Koerier knows of a ZGW client: its shared secret (opened), its scopes and the source it publishes under. */
export interface ZgwClientRecord {
  readonly secret: string;
  readonly scopes: ReadonlySet<ZgwScope>;
  /** The first of its publish grants: the `source` of the CloudEvents its notificaties become. */
  readonly source?: string;
}

export interface ZgwClients {
  /** The client's record, or undefined for a client without a ZGW secret. */
  find(clientId: string): Promise<ZgwClientRecord | undefined>;
}

export interface ZgwPrincipal {
  readonly clientId: string;
  readonly client: ZgwClientRecord;
}

export interface ZgwTokenSettings {
  readonly maxTokenAgeSeconds: number;
  readonly now: () => number;
}

/** A token signed a little ahead of our clock (the client's clock) is taken; vng-api-common allows the same leeway. */
const LEEWAY_SECONDS = 60;

/**
 * Verifies the `Authorization: Bearer <jwt>` of a ZGW client and checks that it holds one of
 * `anyOf` scopes. Throws the 403 `Fout`: `not_authenticated` (no token), `invalid-client-identifier`
 * (no `client_id`, or a client without a ZGW secret), `invalid-jwt-signature` (wrong secret, or
 * not HS256), `jwt-missing-iat-claim`, `jwt-expired`, `permission_denied` (missing scope).
 */
export async function authenticateZgwClient(
  authorization: string | undefined,
  anyOf: readonly ZgwScope[],
  clients: ZgwClients,
  settings: ZgwTokenSettings,
): Promise<ZgwPrincipal> {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) throw zgwRefusal(403, 'not_authenticated', 'Authenticatiegegevens zijn niet opgegeven.');
  let clientId: unknown;
  try {
    clientId = decodeJwt(token)['client_id'];
  } catch {
    throw invalidSignature();
  }
  if (typeof clientId !== 'string' || clientId === '')
    throw zgwRefusal(403, 'invalid-client-identifier', 'Het JWT heeft geen `client_id`.');
  const client = await clients.find(clientId);
  if (client === undefined) throw zgwRefusal(403, 'invalid-client-identifier', 'Client identifier bestaat niet.');
  let iat: unknown;
  try {
    const verified = await jwtVerify(token, new TextEncoder().encode(client.secret), {
      algorithms: ['HS256'],
      currentDate: new Date(settings.now()),
      clockTolerance: LEEWAY_SECONDS,
    });
    iat = verified.payload.iat;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw expired();
    if (error instanceof joseErrors.JOSEError) throw invalidSignature();
    throw error;
  }
  if (typeof iat !== 'number') throw zgwRefusal(403, 'jwt-missing-iat-claim', "Het JWT mist de 'iat' claim.");
  const age = settings.now() / 1000 - iat;
  if (age >= settings.maxTokenAgeSeconds) throw expired();
  if (age < -LEEWAY_SECONDS) throw zgwRefusal(403, 'jwt-iat-in-future', "De 'iat' claim ligt in de toekomst.");
  if (!anyOf.some((scope) => client.scopes.has(scope)))
    throw zgwRefusal(403, 'permission_denied', 'Je hebt geen toestemming om deze actie uit te voeren.');
  return { clientId, client };
}

function expired() {
  return zgwRefusal(403, 'jwt-expired', 'The JWT used for this request is expired.');
}

function invalidSignature() {
  return zgwRefusal(403, 'invalid-jwt-signature', 'Client credentials zijn niet geldig.');
}
