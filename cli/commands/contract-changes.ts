/**
 * `koerier contracts publish|update|deprecate`: changes to the contract register (docs/CONTRACTS.md;
 * EDU-6, EDU-21, EDU-22), each a typed call of the generated client (client/koerier-client.ts), which
 * makes one Idempotency-Key per change and sends it again on every retry.
 *
 * Publishing sends the file's text as it is (JSON or YAML, ./contract-files.ts) with the media type its
 * extension says, so the checksum the register records is the file's own sha-256 and the CLI can say
 * so. The register answers the compatibility verdict against the version before it; a breaking change
 * within a major version is refused (422) unless an admin forces it (`--force`, `?force=true`); the
 * parser's findings on an invalid document (400) are listed one per line. Both refusals exit 1.
 */
import { Option, type Command } from 'commander';
import { contractKinds, versionStatuses } from '../../functions/core/contracts/contract.js';
import type { components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printRecord } from '../output.js';
import type { ContractFile } from './contract-files.js';
import {
  collect,
  contactOf,
  contactOptions,
  contractPatch,
  contractView,
  optional,
  versionPatch,
  type ContactOptions,
  type UpdateOptions,
} from './contract-metadata.js';
import { contractPath, registerChange } from './register-requests.js';

type VersionInput = components['schemas']['ContractVersionInput'];
type VersionRecord = components['schemas']['ContractVersion'];

interface PublishOptions extends ContactOptions {
  readonly kind?: VersionInput['kind'];
  readonly status?: VersionInput['status'];
  readonly sunset?: string;
  readonly type: string[];
  readonly force?: boolean;
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
      // Loaded by the publish alone: its YAML parser is no part of every other command's start.
      const { declaredMediaType, readContractFile } = await import('./contract-files.js');
      const document = await readContractFile(file);
      const kind = options.kind ?? document.kind;
      if (!kind)
        throw new CliError(
          `cannot tell the kind of ${file} (no top-level "asyncapi" or "openapi"): give --kind`,
          exitCodes.usage,
        );
      const owner = contactOf(options, 'owner');
      const contact = contactOf(options, 'contact') ?? owner;
      const body: VersionInput = {
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
      const { data: published, status } = await publishRequest(context, name, version, body, options.force === true);
      if (context.json) return printJson(published);
      process.stdout.write(publishedReport(name, version, status, published, document));
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
      const context = await contextOf(command);
      const { data } =
        version === undefined
          ? await registerChange(context, 'PATCH', contractPath(name), "changing a contract's metadata", (api) =>
              api.PATCH('/contracts/{name}', { params: { path: { name } }, body: contractPatch(options) }),
            )
          : await registerChange(
              context,
              'PATCH',
              contractPath(name, version),
              "changing a contract version's metadata",
              (api) => changeVersion(api, name, version, versionPatch(options)),
            );
      if (context.json) return printJson(data);
      process.stdout.write(`Updated ${name}${version === undefined ? '' : ` ${version}`}.\n`);
      printRecord(contractView(data as Record<string, unknown>));
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
      const { data: record } = await registerChange(
        context,
        'PATCH',
        contractPath(name, version),
        'deprecating a contract version',
        (api) => changeVersion(api, name, version, { status: 'deprecated', sunset: options.sunset }),
      );
      if (context.json) return printJson(record);
      process.stdout.write(
        `Deprecated ${name} ${version}: ${record.status}, sunset ${record.sunset ?? '?'}; its consumers are told.\n`,
      );
    });
}

function changeVersion(
  api: Parameters<Parameters<typeof registerChange>[4]>[0],
  name: string,
  version: string,
  body: components['schemas']['ContractVersionPatch'],
) {
  return api.PATCH('/contracts/{name}/versions/{version}', { params: { path: { name, version } }, body });
}

async function publishRequest(
  context: Awaited<ReturnType<typeof contextOf>>,
  name: string,
  version: string,
  body: VersionInput,
  force: boolean,
): Promise<{ data: VersionRecord; status: number }> {
  // One key per request body, made by the client and sent again as it is on every retry (EDU-IDEM).
  const send = (what: VersionInput) =>
    registerChange(context, 'PUT', contractPath(name, version), 'publishing a contract', (api) =>
      api.PUT('/contracts/{name}/versions/{version}', {
        params: { path: { name, version }, ...(force ? { query: { force: true } } : {}) },
        body: what,
      }),
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
    for (const message of compatibility.messages ?? []) {
      lines.push(`    ${message.message}: ${message.verdict}`);
      // A finding names the direction that fails: `forward` means events of this version may not suit consumers of the previous one.
      for (const finding of message.findings ?? [])
        lines.push(
          `      - ${finding.pointer || '/'} (not ${finding.direction} compatible): ${finding.message} (${finding.change})`,
        );
    }
  }
  return `${lines.join('\n')}\n`;
}
