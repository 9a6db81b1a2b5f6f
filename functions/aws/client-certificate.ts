/**
 * Where the mTLS client certificate comes from (issue 12, item 5), as `KOERIER_CLIENT_CERTIFICATE`
 * names it: one PEM text holding the certificate chain (the client certificate first) and its
 * private key (PKCS #8 or the older forms), e.g. a PKIoverheid certificate with its intermediates.
 *
 * - `arn:aws:secretsmanager:…`: a Secrets Manager secret whose SecretString is that PEM text, read
 *   once per container through the AWS Parameters and Secrets Lambda Extension (a layer the stack
 *   adds to the functions that call out): no SDK in the bundle, the extension caches, and the key is
 *   only ever in the function's memory — no API of Koerier returns it.
 * - `file:<path>`: that PEM text in a file (the laptop host, tests).
 */
import { readFile } from 'node:fs/promises';
import type { ClientCertificate } from '../net/safe-http-client.js';

/** The extension's documented port (PARAMETERS_SECRETS_EXTENSION_HTTP_PORT, default 2773). */
const EXTENSION_URL = 'http://localhost:2773';

export interface ClientCertificateOptions {
  /** The Lambda's session token, which the extension requires in `X-Aws-Parameters-Secrets-Token`. */
  readonly sessionToken?: () => string | undefined;
  /** Default: the extension on localhost (tests pass a stand-in's address). */
  readonly extensionUrl?: string;
}

export function clientCertificateSource(
  reference: string,
  options: ClientCertificateOptions = {},
): () => Promise<ClientCertificate> {
  if (reference.startsWith('file:'))
    return async () => parseClientCertificate(await readFile(reference.slice('file:'.length), 'utf8'));
  return async () => parseClientCertificate(await secretString(reference, options));
}

async function secretString(secretId: string, options: ClientCertificateOptions): Promise<string> {
  const token = options.sessionToken?.();
  if (!token) throw new Error('no session token for the Parameters and Secrets extension (AWS_SESSION_TOKEN)');
  const response = await fetch(
    `${options.extensionUrl ?? EXTENSION_URL}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`,
    {
      headers: { 'x-aws-parameters-secrets-token': token },
      signal: AbortSignal.timeout(5_000),
    },
  );
  // The extension's error text may name the secret; never its value. Only the status goes on.
  if (!response.ok)
    throw new Error(
      `the Parameters and Secrets extension answered ${response.status} for the client certificate secret`,
    );
  const body = (await response.json()) as { SecretString?: unknown };
  if (typeof body.SecretString !== 'string') throw new Error('the client certificate secret has no SecretString');
  return body.SecretString;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/** The certificates and the one private key of a PEM text; throws, naming what is missing (never a value). */
export function parseClientCertificate(pem: string): ClientCertificate {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  const certificates = blocks.filter((block) => block[1] === 'CERTIFICATE').map((block) => block[0]);
  const keys = blocks.filter((block) => /PRIVATE KEY$/.test(block[1]!)).map((block) => block[0]);
  if (certificates.length === 0) throw new Error('the client certificate PEM holds no CERTIFICATE');
  if (keys.length !== 1)
    throw new Error(`the client certificate PEM must hold exactly one private key, not ${keys.length}`);
  if (/ENCRYPTED/.test(keys[0]!))
    throw new Error('the client certificate private key must not be encrypted (the secret store protects it)');
  return { certificate: certificates.join('\n'), privateKey: keys[0]! };
}
