/**
 * What the contract register needs from the world: the metadata (DynamoDbContractStore), the
 * documents and their message schemas (S3ContractDocuments), the ecosystems' own parsers
 * (functions/app/contract-parsers.ts), who consumes which event types, and the hook a deprecation
 * calls. Memory adapters for tests: ./memory-adapters.ts.
 */
import type { ContractBinding, ContractKind, ContractRecord, DeprecationNotice, VersionRecord } from './contract.js';
import type { DocumentSyntax } from './document-media-types.js';
import type { JsonSchema } from './schema-compatibility.js';

export interface ContractStore {
  listContracts(): Promise<ContractRecord[]>;
  getContract(name: string): Promise<ContractRecord | undefined>;
  /** Creates the contract when `previous` is undefined, else replaces `previous`; throws `ContractChangedError` when either fails. */
  saveContract(record: ContractRecord, previous: ContractRecord | undefined): Promise<void>;
  listVersions(name: string): Promise<VersionRecord[]>;
  getVersion(name: string, version: string): Promise<VersionRecord | undefined>;
  /** Throws `ContractChangedError` when the version exists: versions are immutable. */
  createVersion(record: VersionRecord): Promise<void>;
  /** Replaces the metadata of `previous`; throws `ContractChangedError` when it changed meanwhile. */
  saveVersion(record: VersionRecord, previous: VersionRecord): Promise<void>;
  listBindings(): Promise<ContractBinding[]>;
  getBinding(type: string): Promise<ContractBinding | undefined>;
  putBinding(binding: ContractBinding): Promise<void>;
  /** False when there was none. */
  deleteBinding(type: string): Promise<boolean>;
}

export class ContractChangedError extends Error {
  override name = 'ContractChangedError';
}

/** Message id → its payload schema (dereferenced), as published with the version. */
export type MessageSchemas = Readonly<Record<string, JsonSchema>>;

export interface ContractDocuments {
  putDocument(name: string, version: string, text: string, mediaType: string): Promise<void>;
  getDocument(name: string, version: string): Promise<string | undefined>;
  putSchemas(name: string, version: string, schemas: MessageSchemas): Promise<void>;
  getSchemas(name: string, version: string): Promise<MessageSchemas | undefined>;
}

/** One thing a parser found, with where in the document (a JSON Pointer) when it says, and its line in a YAML document. */
export interface ParserFinding {
  readonly message: string;
  /** The register's own rule that refused it (a cap), where it is not the parser's finding. */
  readonly rule?: string;
  readonly path?: string;
  readonly line?: number;
  readonly severity: 'error' | 'warning';
}

export type ParsedContract =
  | {
      readonly valid: true;
      readonly specVersion: string;
      readonly messages: readonly { readonly id: string; readonly name?: string; readonly payload?: JsonSchema }[];
      readonly warnings: readonly ParserFinding[];
    }
  | { readonly valid: false; readonly errors: readonly ParserFinding[] };

/**
 * The OpenAPI and AsyncAPI ecosystems' own parsers; never follows an external `$ref`. `syntax` is
 * how the text is read, from the media type it is published in: JSON text that is not JSON, or
 * YAML that is not YAML, is refused (with the line), and so is YAML whose aliases expand too far.
 */
export interface ContractParser {
  parse(kind: ContractKind, text: string, syntax: DocumentSyntax): Promise<ParsedContract>;
}

export interface ContractConsumer {
  readonly subscriptionId: string;
  readonly owner: string;
  readonly types: readonly string[];
}

/** The subscriptions that name any of `types`. */
export interface ContractConsumers {
  consumersOf(types: readonly string[]): Promise<ContractConsumer[]>;
}

/**
 * Called when a version becomes deprecated, with its consumers. The operational events of the
 * replay slice (work/opsinsight) implement it; until they are wired the composition root logs it.
 */
export interface ContractLifecycleHook {
  contractVersionDeprecated(notice: DeprecationNotice): Promise<void>;
}
