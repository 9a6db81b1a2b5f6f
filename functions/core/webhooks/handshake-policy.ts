/**
 * Which push subscriptions the validation handshake (WH-4) is asked of by default: a deployment
 * setting whose default follows the deployment's profile (issue 36 item 5).
 *
 * - `required` (NL GOV): every push subscription gets the handshake unless its owner is one of the
 *   clients the operator named as agreed out of band (WH-5). The NL GOV guidelines take the
 *   CloudEvents webhook spec's abuse protection as it is.
 * - `agreed-for-directory-partners` (Edukoppeling): the profile drops abuse protection (rule 3f):
 *   "OAuth2 already governs access to the webhook endpoint; a consumer granting the producer access
 *   through OAuth2 thereby approves it to send" (§3.6). A partner in the partner directory was
 *   admitted by the operator, and each of its push subscriptions carries the OAuth2 client
 *   credentials of its target (only those: this policy goes with `oauth2-only` sink credentials),
 *   so its subscriptions start on that agreement, and a receiver that does not implement OPTIONS
 *   still gets its events. A subscriber may still ask for the handshake (`validation: "handshake"`).
 */
export const VALIDATION_HANDSHAKE_POLICIES = ['required', 'agreed-for-directory-partners'] as const;
export type ValidationHandshakePolicy = (typeof VALIDATION_HANDSHAKE_POLICIES)[number];

/** Where no profile says otherwise, the stricter: NL GOV, and what Koerier did before the setting existed. */
export const DEFAULT_VALIDATION_HANDSHAKE: ValidationHandshakePolicy = 'required';

export function validationHandshakeOf(value: string): ValidationHandshakePolicy | undefined {
  return VALIDATION_HANDSHAKE_POLICIES.find((policy) => policy === value.trim());
}

/** The problem to report for a value that is no policy: what it must be instead. */
export const VALIDATION_HANDSHAKE_CHOICES = VALIDATION_HANDSHAKE_POLICIES.map((policy) => `"${policy}"`).join(' or ');
