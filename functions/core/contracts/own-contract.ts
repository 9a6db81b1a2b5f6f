/**
 * Koerier registers itself (issue 14, item 4; Edukoppeling §3.4: the intermediary registers the
 * technical contract of its webhook): its own OpenAPI document, the one served at /openapi.json,
 * is the contract `koerier-webhook` at the API's version. Published through the same code as any
 * contract — parser, checksum, immutability — by the register itself on its first request after a
 * deploy (or after the laptop host starts), so both hosts seed it the same way and a new API
 * version becomes a new contract version.
 */
import type { Principal } from '../auth/access-tokens.js';
import { describeError } from '../errors/describe-error.js';
import type { Log } from '../ports/log.js';
import { publishVersion, type PublishDependencies } from './publish-version.js';

export const OWN_CONTRACT = 'koerier-webhook';
/** The register itself, as the publisher of its own contract. */
const REGISTER: Principal = { clientId: 'koerier', scopes: new Set() };

export interface OwnDocument {
  readonly version: string;
  readonly text: string;
  readonly owner: { readonly name: string; readonly email?: string; readonly url?: string };
}

/** Publishes the document unless this version is there already; logs and resolves false when it cannot. */
export async function registerOwnContract(
  deps: PublishDependencies & { readonly log: Log },
  own: OwnDocument,
): Promise<boolean> {
  try {
    if (await deps.store.getVersion(OWN_CONTRACT, own.version)) return true;
    await publishVersion(
      deps,
      REGISTER,
      OWN_CONTRACT,
      own.version,
      {
        kind: 'openapi-webhook',
        description:
          "Koerier's own API: the webhook partners publish CloudEvents to (POST /events), and its management API.",
        owner: own.owner,
        contact: own.owner,
        status: 'active',
        eventTypes: [],
        document: own.text,
        mediaType: 'application/vnd.oai.openapi+json',
      },
      false,
    );
    deps.log.info('own contract registered', { contract: OWN_CONTRACT, version: own.version });
    return true;
  } catch (error) {
    deps.log.error('own contract not registered', {
      contract: OWN_CONTRACT,
      version: own.version,
      error: describeError(error),
    });
    return false;
  }
}
