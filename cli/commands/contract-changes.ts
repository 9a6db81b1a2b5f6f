/**
 * `koerier contracts publish|update|deprecate`: changes to the contract register (docs/CONTRACTS.md;
 * EDU-6, EDU-21, EDU-22), each with one Idempotency-Key that the API client (client/koerier-client.ts) makes once and sends again on every retry.
 *
 * Publishing sends the file's text as it is (JSON or YAML) with the media type its extension says
 * (`.yaml`/`.yml` YAML, `.json` JSON, else what the text looks like), so the checksum the register
 * records is the file's own sha-256 and the CLI can say so. The register answers the compatibility verdict
 * against the version before it; a breaking change within a major version is refused (422) unless an
 * admin forces it (`--force`, `?force=true`); the parser's findings on an invalid document (400) are
 * listed one per line. Both refusals exit 1.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Option, type Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import {
  contractKinds,
  versionStatuses,
  type ContactPoint,
  type ContractKind,
  type VersionRecord,
} from '../../functions/core/contracts/contract.js';
import type { ApiAnswer } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printRecord } from '../output.js';
import { contractPath, registerRequest } from './register-requests.js';

interface ContactOptions {
  readonly owner?: string;
  readonly ownerEmail?: string;
  readonly ownerUrl?: string;
  readonly contact?: string;
  readonly contactEmail?: string;
  readonly contactUrl?: string;
  readonly description?: string;
}

interface PublishOptions extends ContactOptions {
  readonly kind?: ContractKind;
  readonly status?: string;
  readonly sunset?: string;
  readonly type: string[];
  readonly force?: boolean;
}

interface UpdateOptions extends ContactOptions {
  readonly status?: string;
  readonly sunset?: string;
  readonly type: string[];
}

/** A contract document read from a file: its text as published, the media type its name says, the kind its top-level key says. */
export interface ContractFile {
  readonly text: string;
  readonly mediaType: 'application/json' | 'application/yaml';
  readonly kind: ContractKind | undefined;
  /** RFC 9530 form, as the register records it: `sha-256=:<base64>:`. */
  readonly checksum: string;
}

export function registerContractChanges(contracts: Command): void {
  const publish = contracts
    .command('publish')
    .description('publish a version of a contract: an OpenAPI 3.x webhook or AsyncAPI 3.x data document (JSON or YAML)')
    .argument('<name>', 'the contract: lower-case letters, digits, "." and "-"')
    .argument('<version>', 'its semantic version (MAJOR.MINOR.PATCH); a published version never changes')
    .argument('<file>', 'the document: .yaml/.yml is YAML, .json JSON')
    .addOption(
      new Option(
        '--kind <kind>',
        'default: asyncapi-data for an "asyncapi" document, openapi-webhook for an "openapi" one',
      ).choices(contractKinds),
    )
    .addOption(
      new Option('--status <status>', "the version's status (the register's default: active)").choices(versionStatuses),
    )
    .option('--sunset <date>', 'RFC 3339 date after which the version is retired (needed with --status deprecated)')
    .addOption(
      new Option('-t, --type <type>', 'an event type the version covers (repeat)')
        .argParser(collect)
        .default([], 'its AsyncAPI message names'),
    )
    .option('--force', 'admin only: publish a breaking change within the same major version anyway')
    .addHelpText(
      'after',
      `
A new contract needs its owner and contact point (EDU-22): --owner NAME with --owner-email and/or
--owner-url; the contact point likewise (--contact …), or the owner's when no --contact is given.

Exit 1 when the register refuses: an invalid document (400, the parser's findings listed), a
breaking change (422, the compatibility findings listed), another document under a published
version (409). Exit 3 for --force without the admin scope.`,
    )
    .action(async (name: string, version: string, file: string, options: PublishOptions, command: Command) => {
      const document = await readContractFile(file);
      const kind = options.kind ?? document.kind;
      if (!kind)
        throw new CliError(
          `cannot tell the kind of ${file} (no top-level "asyncapi" or "openapi"): give --kind`,
          exitCodes.usage,
        );
      const owner = contactOf(options, 'owner');
      const contact = contactOf(options, 'contact') ?? owner;
      const body = {
        kind,
        document: document.text,
        mediaType: declaredMediaType(kind, document.mediaType),
        ...optional('status', options.status),
        ...optional('sunset', options.sunset),
        ...(options.type.length > 0 ? { eventTypes: options.type } : {}),
        ...optional('description', options.description),
        ...optional('owner', owner),
        ...optional('contact', contact),
      };
      const context = await contextOf(command);
      const answer = await publishRequest(context, name, version, body, options.force === true);
      const published = answer.json as VersionRecord;
      if (context.json) return printJson(published);
      process.stdout.write(publishedReport(name, version, answer.status, published, document));
    });
  contactOptions(publish);

  const update = contracts
    .command('update')
    .description(
      "change a contract's metadata (description, owner, contact point) or, with a version, that version's status, sunset and event types",
    )
    .argument('<name>')
    .argument('[version]')
    .addOption(
      new Option('--status <status>', 'with a version: its new status (retired is final)').choices(versionStatuses),
    )
    .option('--sunset <date>', 'with a version: RFC 3339 sunset date (needed to deprecate)')
    .addOption(
      new Option('-t, --type <type>', 'with a version: the event types it covers, replacing the list (repeat)')
        .argParser(collect)
        .default([], 'unchanged'),
    )
    .action(async (name: string, version: string | undefined, options: UpdateOptions, command: Command) => {
      const body = version === undefined ? contractPatch(options) : versionPatch(options);
      const context = await contextOf(command);
      const what = version === undefined ? "changing a contract's metadata" : "changing a contract version's metadata";
      const answer = await registerRequest(context, 'PATCH', contractPath(name, version), { body }, what);
      if (context.json) return printJson(answer.json);
      process.stdout.write(`Updated ${name}${version === undefined ? '' : ` ${version}`}.\n`);
      printRecord(contractView((answer.json ?? {}) as Record<string, unknown>));
    });
  contactOptions(update);

  contracts
    .command('deprecate')
    .description(
      'deprecate a version until its sunset date; the subscriptions consuming its event types are told (dev.koerier.contract.deprecated.v1)',
    )
    .argument('<name>')
    .argument('<version>')
    .requiredOption('--sunset <date>', 'RFC 3339 date after which the version is retired')
    .action(async (name: string, version: string, options: { sunset: string }, command: Command) => {
      const context = await contextOf(command);
      const answer = await registerRequest(
        context,
        'PATCH',
        contractPath(name, version),
        { body: { status: 'deprecated', sunset: options.sunset } },
        'deprecating a contract version',
      );
      const record = answer.json as VersionRecord;
      if (context.json) return printJson(record);
      process.stdout.write(
        `Deprecated ${name} ${version}: ${record.status}, sunset ${record.sunset ?? '?'}; its consumers are told.\n`,
      );
    });
}

async function publishRequest(
  context: Awaited<ReturnType<typeof contextOf>>,
  name: string,
  version: string,
  body: Record<string, unknown>,
  force: boolean,
): Promise<ApiAnswer> {
  // One key per request body, sent again as it is on every retry (EDU-IDEM: a retry is the same operation).
  const send = (what: Record<string, unknown>) =>
    registerRequest(
      context,
      'PUT',
      contractPath(name, version),
      { body: what, query: force ? { force: 'true' } : {} },
      'publishing a contract',
    );
  try {
    try {
      return await send(body);
    } catch (error) {
      // A register from before YAML documents (issue 14 item 2) refuses the `mediaType` member; it takes the
      // text alone, JSON, or YAML for AsyncAPI. The refusal stored nothing, so the body without it is a new request.
      if (
        !(error instanceof CliError) ||
        !('mediaType' in body) ||
        !/Unknown member\(s\): mediaType\b/.test(error.message)
      )
        throw error;
      const { mediaType: _declared, ...older } = body;
      return await send(older);
    }
  } catch (error) {
    if (error instanceof CliError && error.message.includes('(contract-change-breaking)') && !force) {
      throw new CliError(
        `${error.message}\nA new major version may break; an admin may publish this one anyway with --force.`,
        error.exitCode,
      );
    }
    throw error;
  }
}

function publishedReport(
  name: string,
  version: string,
  status: number,
  published: VersionRecord,
  document: ContractFile,
): string {
  if (status === 200)
    return `${name} ${version} was already published with this document: nothing changed (${published.checksum}).\n`;
  const lines = [
    `Published ${name} ${version} (${published.specVersion ? `${published.specVersion}, ` : ''}${published.status}).`,
    `  checksum    ${published.checksum}${published.checksum === document.checksum ? ' (the file as sent)' : ` (the file's is ${document.checksum})`}`,
    `  event types ${published.eventTypes.length > 0 ? published.eventTypes.join(', ') : '(none)'}`,
  ];
  const compatibility = published.compatibility;
  if (!compatibility) lines.push('  compatibility: the first version, nothing to compare with');
  else {
    lines.push(
      `  compatibility with ${compatibility.previous}: ${compatibility.verdict}${compatibility.forcedBy ? `, forced by ${compatibility.forcedBy}` : ''}`,
    );
    for (const message of compatibility.messages) {
      lines.push(`    ${message.message}: ${message.verdict}`);
      // A finding names the direction that fails: `forward` means events of this version may not suit consumers of the previous one.
      for (const finding of message.findings)
        lines.push(
          `      - ${finding.pointer || '/'} (not ${finding.direction} compatible): ${finding.message} (${finding.change})`,
        );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The file's bytes as text (UTF-8, as the register stores it), with the media type its extension says and the kind its content says. */
export async function readContractFile(path: string): Promise<ContractFile> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, exitCodes.usage);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`${path} is not UTF-8 text`, exitCodes.usage);
  }
  const extension = extname(path).toLowerCase();
  const yaml =
    extension === '.yaml' || extension === '.yml' || (extension !== '.json' && !text.trimStart().startsWith('{'));
  const mediaType = yaml ? 'application/yaml' : 'application/json';
  return {
    text,
    mediaType,
    kind: kindOf(text, mediaType),
    checksum: `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`,
  };
}

/** The kind's own media type for the file's syntax (the register serves the document back in it). */
export function declaredMediaType(kind: ContractKind, syntax: ContractFile['mediaType']): string {
  const family = kind === 'asyncapi-data' ? 'application/vnd.aai.asyncapi' : 'application/vnd.oai.openapi';
  return `${family}+${syntax === 'application/yaml' ? 'yaml' : 'json'}`;
}

/**
 * `asyncapi` or `openapi` at the top of the document. A document that does not parse is still sent
 * when a line names its kind, so that the register's parser says what is wrong with it (and where).
 */
export function kindOf(text: string, mediaType: ContractFile['mediaType']): ContractKind | undefined {
  let document: unknown;
  try {
    // A low alias limit: this only looks for a top-level key, and an alias bomb should not stall the CLI.
    document = mediaType === 'application/yaml' ? parseYaml(text, { maxAliasCount: 100 }) : JSON.parse(text);
  } catch {
    const key = /^\s*\{?\s*["']?(asyncapi|openapi)["']?\s*:/m.exec(text)?.[1];
    return key === 'asyncapi' ? 'asyncapi-data' : key === 'openapi' ? 'openapi-webhook' : undefined;
  }
  if (typeof document !== 'object' || document === null) return undefined;
  if ('asyncapi' in document) return 'asyncapi-data';
  if ('openapi' in document) return 'openapi-webhook';
  return undefined;
}

function contactOptions(command: Command): void {
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

function contractPatch(options: UpdateOptions): Record<string, unknown> {
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

function versionPatch(options: UpdateOptions): Record<string, unknown> {
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

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function collect(value: string, previous: string[]): string[] {
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
