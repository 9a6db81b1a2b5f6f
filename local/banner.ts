/** The lines `npm start` prints once the laptop host runs. */
import type { KoerierHost } from './host.js';

/**
 * What `npm start` prints. Never a client secret: a terminal's scrollback, a screen share or a
 * CI log would keep it. It says where the secrets are and how to read one. The console's sign-in
 * code is shown: it is good only while this start runs, and only to someone on this machine.
 */
export function banner(
  host: Pick<
    KoerierHost,
    'url' | 'apiUrl' | 'configFile' | 'configCreated' | 'localConfig' | 'signInCode' | 'signInCodeFile' | 'config'
  >,
  fresh: boolean,
): string {
  const clients = Object.entries(host.localConfig.clients);
  const width = Math.max(...clients.map(([id]) => id.length));
  const firstId = clients[0]?.[0] ?? '<client>';
  const readSecret = (clientId: string) => `node -p "require('${host.configFile}').clients['${clientId}'].secret"`;
  return [
    '',
    `Koerier laptop host${fresh ? ' (fresh state)' : ''}`,
    `  API       ${host.apiUrl}`,
    // KOERIER_PUBLIC_BASE_URL: the host is reached through another name, which every link names.
    ...(host.config.publicBaseUrl === host.apiUrl
      ? []
      : [`  Links     ${host.config.publicBaseUrl}  (KOERIER_PUBLIC_BASE_URL)`]),
    `  Console   ${host.url}/console/  (sign in as a development client)`,
    `            sign-in code ${host.signInCode}  (this start only; also in ${host.signInCodeFile})`,
    `  OpenAPI   ${host.apiUrl}/openapi.json`,
    `  JWKS      ${host.url}/.well-known/jwks.json`,
    `  Signing   ${host.url}/.well-known/http-message-signatures-directory  (keys of signed deliveries)`,
    `  Health    ${host.url}/health`,
    `  Token     ${host.url}/oauth/token`,
    '',
    `Development clients (${host.configFile}${host.configCreated ? ', created now' : ''}):`,
    ...clients.map(([id, client]) => `  ${id.padEnd(width)}  scopes ${client.scopes.join(' ')}`),
    `Their secrets are in that file (readable by you only); one client's secret:`,
    `  ${readSecret(firstId)}`,
    '',
    'Get a token:',
    `  curl -s ${host.url}/oauth/token -d grant_type=client_credentials -d client_id=${firstId} -d client_secret="$(${readSecret(firstId)})"`,
    '',
    'Ctrl-C stops.',
    '',
  ].join('\n');
}
