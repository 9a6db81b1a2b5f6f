/**
 * A contract's metadata as the `koerier contracts` commands take and show it: the owner and contact
 * point (EDU-22) from their flags, the change a `contracts update` asks for (of the contract or of
 * one version), and contact points and compatibility verdicts on one line for tables.
 */
import type { Command } from 'commander';
import type { components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';

type ContactPoint = components['schemas']['ContactPoint'];

export interface ContactOptions {
  readonly owner?: string;
  readonly ownerEmail?: string;
  readonly ownerUrl?: string;
  readonly contact?: string;
  readonly contactEmail?: string;
  readonly contactUrl?: string;
  readonly description?: string;
}

export interface UpdateOptions extends ContactOptions {
  readonly status?: components['schemas']['ContractVersionPatch']['status'];
  readonly sunset?: string;
  readonly type: string[];
}

export function contactOptions(command: Command): void {
  command
    .option('--description <text>', 'what the contract is for')
    .option('--owner <name>', 'EDU-22: who owns and maintains the specification')
    .option('--owner-email <address>', "the owner's e-mail address")
    .option('--owner-url <url>', "the owner's web page")
    .option('--contact <name>', "EDU-22: the contact point (publish: the owner's when not given)")
    .option('--contact-email <address>', "the contact point's e-mail address")
    .option('--contact-url <url>', "the contact point's web page");
}

/** `--owner NAME --owner-email …` as the register's contact point; undefined when none of its flags is given. */
export function contactOf(options: ContactOptions, who: 'owner' | 'contact'): ContactPoint | undefined {
  const name = options[who];
  const email = options[`${who}Email`];
  const url = options[`${who}Url`];
  if (name === undefined && email === undefined && url === undefined) return undefined;
  if (name === undefined || (email === undefined && url === undefined)) {
    throw new CliError(
      `--${who} NAME goes with --${who}-email and/or --${who}-url (EDU-22: a name and a way to reach them)`,
      exitCodes.usage,
    );
  }
  return { name, ...optional('email', email), ...optional('url', url) };
}

export function contractPatch(options: UpdateOptions): components['schemas']['ContractPatch'] {
  if (options.status !== undefined || options.sunset !== undefined || options.type.length > 0) {
    throw new CliError(
      '--status, --sunset and --type change a version: name it (koerier contracts update <name> <version> …)',
      exitCodes.usage,
    );
  }
  const patch = {
    ...optional('description', options.description),
    ...optional('owner', contactOf(options, 'owner')),
    ...optional('contact', contactOf(options, 'contact')),
  };
  if (Object.keys(patch).length === 0)
    throw new CliError('nothing to change: give --description, --owner … or --contact …', exitCodes.usage);
  return patch;
}

export function versionPatch(options: UpdateOptions): components['schemas']['ContractVersionPatch'] {
  if (
    [
      options.description,
      options.owner,
      options.ownerEmail,
      options.ownerUrl,
      options.contact,
      options.contactEmail,
      options.contactUrl,
    ].some((v) => v !== undefined)
  ) {
    throw new CliError(
      '--description, --owner and --contact belong to the contract, not a version: leave the version out',
      exitCodes.usage,
    );
  }
  const patch = {
    ...optional('status', options.status),
    ...optional('sunset', options.sunset),
    ...(options.type.length > 0 ? { eventTypes: options.type } : {}),
  };
  if (Object.keys(patch).length === 0)
    throw new CliError('nothing to change: give --status, --sunset or --type', exitCodes.usage);
  return patch;
}

export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `Name <e-mail> (url)` of a contact point (EDU-22). */
export function contactLine(value: unknown): string {
  if (!value || typeof value !== 'object') return '';
  const { name, email, url } = value as { name?: string; email?: string; url?: string };
  return [name, email && `<${email}>`, url && `(${url})`].filter(Boolean).join(' ');
}

export function compatibilityLine(value: unknown): string {
  if (!value || typeof value !== 'object') return '';
  const { previous, verdict, forcedBy } = value as { previous?: string; verdict?: string; forcedBy?: string };
  return `${verdict ?? '?'} vs ${previous ?? '?'}${forcedBy ? `, forced by ${forcedBy}` : ''}`;
}

/** A contract record for a table: its contact points on one line each. */
export function contractView(contract: Record<string, unknown>): Record<string, unknown> {
  return {
    ...contract,
    ...(contract['owner'] ? { owner: contactLine(contract['owner']) } : {}),
    ...(contract['contact'] ? { contact: contactLine(contract['contact']) } : {}),
  };
}
