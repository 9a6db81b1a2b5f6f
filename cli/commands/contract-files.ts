/**
 * A contract document read from a file for `koerier contracts publish`: its text as published (JSON or
 * YAML), the media type its extension says, the kind its top-level key says, and its checksum as the
 * register records it, so the CLI can tell whether the register stored the file as sent.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ContractKind } from '../../functions/core/contracts/contract.js';
import { CliError, exitCodes } from '../exit-codes.js';
import type { components } from '../api-client.js';

/** The media type a published version is declared in (the register serves the document back in it). */
export type DeclaredMediaType = NonNullable<components['schemas']['ContractVersionInput']['mediaType']>;

/** A contract document read from a file: its text as published, the media type its name says, the kind its top-level key says. */
export interface ContractFile {
  readonly text: string;
  readonly mediaType: 'application/json' | 'application/yaml';
  readonly kind: ContractKind | undefined;
  /** RFC 9530 form, as the register records it: `sha-256=:<base64>:`. */
  readonly checksum: string;
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
export function declaredMediaType(kind: ContractKind, syntax: ContractFile['mediaType']): DeclaredMediaType {
  const family = kind === 'asyncapi-data' ? 'application/vnd.aai.asyncapi' : 'application/vnd.oai.openapi';
  return `${family}+${syntax === 'application/yaml' ? 'yaml' : 'json'}` as const;
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
