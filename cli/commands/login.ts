/**
 * `koerier login` and `koerier logout`: client credentials against the token URL, the token cached
 * (0600) and, unless `--no-store-secret`, the secret kept beside it so later commands can fetch a
 * new token when this one is about to expire.
 */

import type { Command } from 'commander';
import { CliError, exitCodes } from '../exit-codes.js';
import { printJson } from '../output.js';
import { gatewayUrl, resolveSettings, type GlobalOptions } from '../settings.js';
import { discoverTokenUrl, requestToken } from '../tokens.js';

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description(
      'get a token with client credentials and remember the gateway, the client and (unless --no-store-secret) the secret in a profile',
    )
    .option('--no-store-secret', 'keep only the token: log in again when it expires')
    .addHelpText(
      'after',
      `
The secret comes from --client-secret-file FILE (or - for stdin), KOERIER_CLIENT_SECRET, or a prompt;
never from an argument. Stored under $XDG_CONFIG_HOME/koerier (else ~/.config/koerier), mode 0600.
The token URL (--token-url, else the one the gateway's API description names) must be https, or http
on localhost, 127.0.0.0/8 or ::1. Login pins it in the profile: later commands send the stored secret
there only, and only for this gateway; another --url or KOERIER_URL needs a login of its own.`,
    )
    .action(async (options: { storeSecret: boolean }, command: Command) => {
      const settings = await resolveSettings(command.optsWithGlobals<GlobalOptions>(), process.env, { forLogin: true });
      const url = gatewayUrl(settings);
      const interactive = process.stdin.isTTY === true;
      // Loaded only when a prompt may be needed: every other command starts faster without it.
      const { input, password } = interactive
        ? await import('@inquirer/prompts')
        : { input: undefined, password: undefined };
      const clientId = settings.clientId ?? (input ? await input({ message: 'Client id' }) : undefined);
      if (!clientId) throw new CliError('no client: give --client-id or set KOERIER_CLIENT_ID', exitCodes.usage);
      const secret =
        settings.secret ??
        (password ? await password({ message: `Client secret of ${clientId}`, mask: '*' }) : undefined);
      if (!secret)
        throw new CliError(
          'no client secret: set KOERIER_CLIENT_SECRET, give --client-secret-file, or run login in a terminal',
          exitCodes.usage,
        );
      const tokenUrl = settings.tokenUrl ?? (await discoverTokenUrl(url));
      const answer = await requestToken(tokenUrl, clientId, secret);

      const store = settings.store;
      await store.saveProfile(settings.profileName, { url, tokenUrl, clientId });
      await store.saveToken(`${tokenUrl} ${clientId}`, {
        accessToken: answer.accessToken,
        expiresAt: answer.expiresAt,
      });
      await store.saveSecret(settings.profileName, clientId, options.storeSecret ? secret : undefined);

      const expiresAt = new Date(answer.expiresAt).toISOString();
      if (settings.json)
        printJson({ profile: settings.profileName, url, tokenUrl, clientId, scope: answer.scope ?? null, expiresAt });
      else
        process.stdout.write(
          `Logged in to ${url} as ${clientId} (profile ${settings.profileName}).\n` +
            `Token URL ${tokenUrl}, pinned: the profile's secret goes there only, and only for this gateway.\n` +
            `Scopes: ${answer.scope ?? '(not said)'}; token valid until ${expiresAt}${options.storeSecret ? ', renewed automatically' : ''}.\n`,
        );
    });

  program
    .command('logout')
    .description("forget the profile's stored secret and its cached token")
    .action(async (_options: unknown, command: Command) => {
      const settings = await resolveSettings(command.optsWithGlobals<GlobalOptions>());
      const clientId = settings.clientId ?? settings.profile.clientId;
      if (clientId) {
        await settings.store.saveSecret(settings.profileName, clientId, undefined);
        if (settings.tokenUrl) await settings.store.saveToken(`${settings.tokenUrl} ${clientId}`, undefined);
      }
      if (!settings.json) process.stdout.write(`Logged out (profile ${settings.profileName}).\n`);
    });
}
