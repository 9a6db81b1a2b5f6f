/**
 * The media types a contract document may be published in (issue 14 item 2), and what each says
 * about how its text is read. A version keeps the media type it was published with and is served
 * back in it, byte for byte: the register stores the text, never a conversion of it.
 */
import type { ContractKind } from './contract.js';

export type DocumentSyntax = 'json' | 'yaml';

/** Media type → how the text is read. YAML has three names in use; the AsyncAPI and OpenAPI initiatives name their own. */
const documentMediaTypes: Readonly<Record<string, DocumentSyntax>> = {
  'application/json': 'json',
  'application/vnd.aai.asyncapi+json': 'json',
  'application/vnd.oai.openapi+json': 'json',
  'application/yaml': 'yaml',
  'application/x-yaml': 'yaml',
  'text/yaml': 'yaml',
  'application/vnd.aai.asyncapi+yaml': 'yaml',
  'application/vnd.oai.openapi+yaml': 'yaml',
};

export const DOCUMENT_MEDIA_TYPES = Object.keys(documentMediaTypes);

/** The declared media type without parameters, lower-case; undefined when it is none of `DOCUMENT_MEDIA_TYPES`. */
export function knownDocumentMediaType(declared: string): string | undefined {
  const essence = declared.split(';')[0]!.trim().toLowerCase();
  return essence in documentMediaTypes ? essence : undefined;
}

export function syntaxOf(mediaType: string): DocumentSyntax {
  return documentMediaTypes[mediaType] ?? 'yaml';
}

/**
 * The media type of a document published without one: a document sent as a JSON object, or text
 * that opens like one, is JSON; other text is YAML (of which JSON is a subset, so nothing readable
 * is turned away). Named after the kind's own media type.
 */
export function defaultDocumentMediaType(kind: ContractKind, text: string): string {
  const json = text.trimStart().startsWith('{');
  if (kind === 'asyncapi-data') return json ? 'application/vnd.aai.asyncapi+json' : 'application/vnd.aai.asyncapi+yaml';
  return json ? 'application/vnd.oai.openapi+json' : 'application/vnd.oai.openapi+yaml';
}

/** The media type a document is published in: the one declared (`mediaType`), else the default; or why it is refused. */
export function publishedMediaType(
  kind: ContractKind,
  document: string | object,
  declared: unknown,
): string | { readonly refused: string } {
  if (declared === undefined) return defaultDocumentMediaType(kind, typeof document === 'string' ? document : '{');
  const known = typeof declared === 'string' ? knownDocumentMediaType(declared) : undefined;
  if (known === undefined)
    return { refused: `mediaType is the document's media type, one of ${DOCUMENT_MEDIA_TYPES.join(', ')}.` };
  if (typeof document !== 'string' && syntaxOf(known) === 'yaml')
    return { refused: 'A YAML document is sent as its text: document is a string.' };
  return known;
}
