/**
 * Publishing one version (EDU-6, EDU-21, issue 14 items 1-2): the document checked by its
 * ecosystem's parser, compared with the version before it, stored, and then its metadata.
 * A version is immutable: the same document again is answered as it was, another one is a 409.
 */
import { createHash } from 'node:crypto';
import type { Principal } from '../auth/access-tokens.js';
import {
  compareVersions,
  majorOf,
  mayMaintain,
  type ContractRecord,
  type MessageCompatibility,
  type VersionCompatibility,
  type VersionRecord,
} from './contract.js';
import * as http from './http-mapping.js';
import {
  ContractChangedError,
  type ContractDocuments,
  type ContractParser,
  type ContractStore,
  type MessageSchemas,
} from './ports.js';
import { syntaxOf } from './document-media-types.js';
import { payloadFindings } from './payload-checks.js';
import { compareSchemas, type Verdict } from './schema-compatibility.js';

export interface PublishDependencies {
  readonly store: ContractStore;
  readonly documents: ContractDocuments;
  readonly parser: ContractParser;
  readonly clock: () => number;
}

export interface Published {
  readonly created: boolean;
  readonly contract: ContractRecord;
  readonly version: VersionRecord;
}

/** Throws the 400 (document or input), 409 (immutable, kind), 422 (breaking) or 403 (force without admin). */
export async function publishVersion(
  deps: PublishDependencies,
  principal: Principal,
  name: string,
  version: string,
  input: http.PublishInput,
  force: boolean,
): Promise<Published> {
  if (force && !principal.scopes.has('admin')) throw http.forceNeedsAdmin();
  const checksum = `sha-256=:${createHash('sha256').update(input.document, 'utf8').digest('base64')}:`;
  const [contract, existing] = await Promise.all([deps.store.getContract(name), deps.store.getVersion(name, version)]);
  if (contract && contract.kind !== input.kind) throw http.kindMismatch(name, contract.kind);
  if (existing) {
    if (existing.checksum !== checksum) throw http.versionImmutable(name, version);
    return { created: false, contract: contract!, version: existing };
  }
  if (contract && !mayMaintain(principal, contract)) throw http.notMaintainer(name, contract.maintainer);
  if (!contract && (!input.owner || !input.contact)) throw http.ownerRequired();
  const parsed = await deps.parser.parse(input.kind, input.document, syntaxOf(input.mediaType));
  if (!parsed.valid) throw http.invalidDocument(input.kind, parsed.errors);
  const payloadRefusals = payloadFindings(parsed.messages);
  if (payloadRefusals.length > 0) throw http.invalidDocument(input.kind, payloadRefusals);
  const schemas: MessageSchemas = Object.fromEntries(
    parsed.messages.filter((message) => message.payload !== undefined).map((message) => [message.id, message.payload!]),
  );
  const compatibility = contract
    ? await compatibilityWithPrevious(deps, name, version, schemas, principal, force)
    : undefined;
  const at = new Date(deps.clock()).toISOString();
  const record: VersionRecord = {
    contract: name,
    version,
    status: input.status,
    ...(input.sunset === undefined ? {} : { sunset: input.sunset }),
    eventTypes:
      input.eventTypes.length > 0
        ? input.eventTypes
        : [...new Set(parsed.messages.flatMap((message) => (message.name ? [message.name] : [])))],
    checksum,
    mediaType: input.mediaType,
    size: Buffer.byteLength(input.document),
    specVersion: parsed.specVersion,
    messages: parsed.messages.map((message) => ({
      id: message.id,
      ...(message.name ? { name: message.name } : {}),
      hasPayload: message.payload !== undefined,
    })),
    ...(compatibility ? { compatibility } : {}),
    createdAt: at,
    updatedAt: at,
    publishedBy: principal.clientId,
    updatedBy: principal.clientId,
  };
  // Documents first: metadata never names a document that is not stored.
  await deps.documents.putDocument(name, version, input.document, record.mediaType);
  if (input.kind === 'asyncapi-data') await deps.documents.putSchemas(name, version, schemas);
  try {
    await deps.store.createVersion(record);
  } catch (error) {
    // Published by a concurrent request meanwhile: the same document is that answer, another one immutable.
    if (!(error instanceof ContractChangedError)) throw error;
    const now = await deps.store.getVersion(name, version);
    if (now?.checksum !== checksum) throw http.versionImmutable(name, version);
    return { created: false, contract: (await deps.store.getContract(name)) ?? contract!, version: now };
  }
  const saved = await saveContract(deps, name, record, input, contract, principal, at);
  return { created: true, contract: saved, version: record };
}

async function saveContract(
  deps: PublishDependencies,
  name: string,
  record: VersionRecord,
  input: http.PublishInput,
  contract: ContractRecord | undefined,
  principal: Principal,
  at: string,
): Promise<ContractRecord> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = attempt === 0 ? contract : await deps.store.getContract(name);
    const latest =
      current && compareVersions(current.latestVersion, record.version) > 0 ? current.latestVersion : record.version;
    const next: ContractRecord = current
      ? { ...current, latestVersion: latest, updatedAt: at, updatedBy: principal.clientId }
      : {
          name,
          kind: input.kind,
          ...(input.description === undefined ? {} : { description: input.description }),
          owner: input.owner!,
          contact: input.contact!,
          latestVersion: latest,
          createdAt: at,
          updatedAt: at,
          updatedBy: principal.clientId,
          maintainer: principal.clientId,
        };
    try {
      await deps.store.saveContract(next, current);
      return next;
    } catch (error) {
      if (!(error instanceof ContractChangedError)) throw error;
    }
  }
  throw http.changedMeanwhile();
}

/** Issue 14 item 2: each message's payload schema against the highest version below this one. */
async function compatibilityWithPrevious(
  deps: PublishDependencies,
  name: string,
  version: string,
  schemas: MessageSchemas,
  principal: Principal,
  force: boolean,
): Promise<VersionCompatibility | undefined> {
  const earlier = (await deps.store.listVersions(name))
    .filter((other) => compareVersions(other.version, version) < 0)
    .sort((a, b) => compareVersions(b.version, a.version));
  const previous = earlier[0];
  if (!previous) return undefined;
  const previousSchemas = (await deps.documents.getSchemas(name, previous.version)) ?? {};
  const messages: MessageCompatibility[] = [];
  for (const id of new Set([...Object.keys(previousSchemas), ...Object.keys(schemas)])) {
    const before = previousSchemas[id];
    const after = schemas[id];
    if (before === undefined) messages.push({ message: id, verdict: 'added', findings: [] });
    else if (after === undefined) {
      messages.push({
        message: id,
        verdict: 'removed',
        findings: [
          {
            direction: 'forward',
            pointer: '',
            change: 'message-removed',
            message: `message "${id}" is not in this version`,
          },
        ],
      });
    } else messages.push({ message: id, ...compareSchemas(before, after) });
  }
  const verdict = overall(messages);
  const breaking = verdict === 'breaking' && majorOf(previous.version) === majorOf(version);
  if (breaking && !force)
    throw http.breakingChange(
      name,
      version,
      previous.version,
      messages.flatMap((message) => message.findings),
    );
  return { previous: previous.version, verdict, messages, ...(breaking ? { forcedBy: principal.clientId } : {}) };
}

/** The whole version's verdict: backward only when every message is, forward likewise; a removed message breaks. */
function overall(messages: readonly MessageCompatibility[]): Verdict {
  if (messages.some((message) => message.verdict === 'removed' || message.verdict === 'breaking')) return 'breaking';
  const compared = messages.filter((message) => message.verdict !== 'added');
  const backward = compared.every((message) => ['identical', 'full', 'backward'].includes(message.verdict));
  const forward = compared.every((message) => ['identical', 'full', 'forward'].includes(message.verdict));
  if (backward && forward)
    return compared.every((message) => message.verdict === 'identical') && compared.length === messages.length
      ? 'identical'
      : 'full';
  return backward ? 'backward' : forward ? 'forward' : 'breaking';
}
