/**
 * Validation of one CloudEvent in the JSON event format against CloudEvents 1.0 as profiled by
 * NL GOV 1.1 (seed 001) — requirements CE-1…CE-12, JSON-1 and JSON-2. One pass over the members:
 * every violation is reported (never only the first), SHOULD-level findings become warnings, and
 * the context attributes are collected on the way for logs, routing and filters. The findings go
 * to an `IssueCollector` (issue-collector.ts).
 */
import {
  MAX_RECOMMENDED_NAME_LENGTH,
  hasScheme,
  isAttributeName,
  isAbsoluteUri,
  isBase64,
  isCloudEventsString,
  isInt32,
  isInt32String,
  isJsonContentType,
  isMediaType,
  isNldUrn,
  isReverseDnsName,
  isRfc3339Timestamp,
  isUriReference,
  typeVersionProblem,
} from './attribute-syntax.js';
import { printable, type IssueCollector } from './issue-collector.js';

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** Where each REQUIRED attribute's rule lives, for the "missing" finding. */
const REQUIRED = [
  ['id', 'CE-3'],
  ['source', 'CE-4'],
  ['specversion', 'CE-5'],
  ['type', 'CE-6'],
] as const;

const REQUIRED_NAMES: ReadonlySet<string> = new Set(REQUIRED.map(([name]) => name));

/**
 * Context attributes of the profile that are typed String (or a String-encoded type). A Map, not
 * an object literal: member names such as `constructor` must not find Object.prototype.
 */
const STRING_ATTRIBUTE_REQUIREMENT: ReadonlyMap<string, string> = new Map([
  ['id', 'CE-3'],
  ['source', 'CE-4'],
  ['specversion', 'CE-5'],
  ['type', 'CE-6'],
  ['datacontenttype', 'CE-7'],
  ['dataschema', 'CE-8'],
  ['subject', 'CE-9'],
  ['time', 'CE-10'],
  ['dataref', 'CE-11'],
  ['sequence', 'CE-12'],
  ['sequencetype', 'CE-12'],
]);

/** Names for `attribute` when a finding is about `data`/`data_base64`, which are not attributes. */
const DATA = 'data';
const DATA_BASE64 = 'data_base64';

/**
 * Checks one event object and returns its context attributes (null members dropped, JSON-1), or
 * undefined when `value` is not an object at all. Findings go to `issues`. `printableStrings`
 * says the caller already knows every string in `value` holds only U+0020-U+007E, so CE-2's
 * character rule holds without a pass over each value (issue 15: those passes were 7% of a small
 * event's profile).
 */
export function checkEvent(value: unknown, issues: IssueCollector, printableStrings = false): Attributes | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.error(undefined, 'event-object', 'HTTP-1', 'A CloudEvent in the JSON format is a JSON object.');
    return undefined;
  }
  const event = value as Record<string, unknown>;
  const attributes: Attributes = {};
  let hasData = false;
  let hasDataBase64 = false;
  // Counted on the way, so the REQUIRED walk below runs only when one may be missing.
  let requiredPresent = 0;

  for (const name in event) {
    if (issues.stopped) break;
    const v = event[name];
    // JSON-2: the two data members exclude each other by their presence (JSON format §3.1.1),
    // so `"data": null` counts: it is an explicit null payload, not an absent one (§3.1.1 last
    // paragraph). `"data_base64": null` alone carries no bytes and is taken as no data.
    if (name === DATA) {
      hasData = true;
      continue;
    }
    if (name === DATA_BASE64) {
      hasDataBase64 = true;
      if (v !== null && (typeof v !== 'string' || !isBase64(v))) {
        issues.error(
          DATA_BASE64,
          'base64',
          'JSON-2',
          'data_base64 must be a string of base64-encoded bytes (RFC 4648, with padding).',
        );
      }
      continue;
    }
    const requirement = STRING_ATTRIBUTE_REQUIREMENT.get(name);
    // The profile's own names are valid and short; only extension names need checking, whatever
    // the value: a null one too (issue 28). Invalid names are reported and never copied into
    // `attributes` (that also keeps a `__proto__` member from touching the record's prototype).
    const validName = requirement !== undefined || checkExtensionName(name, issues);
    // JSON-1: null means unset.
    if (v === null) continue;
    if (requirement !== undefined) {
      if (REQUIRED_NAMES.has(name)) requiredPresent++;
      if (typeof v !== 'string') {
        issues.error(name, 'string', requirement, `${name} must be a JSON string, not ${describeValue(v)}.`);
        continue;
      }
      if (!printableStrings && !isCloudEventsString(v)) {
        issues.error(
          name,
          'string-characters',
          'CE-2',
          `${name} contains control characters, Unicode noncharacters or unpaired surrogates.`,
        );
      }
      checkKnownAttribute(name, v, issues);
      attributes[name] = v;
      continue;
    }

    // Extension attributes (CE-2): String, Integer or Boolean in the JSON format; other types
    // (Binary, URI, Timestamp) travel as their canonical strings.
    if (typeof v === 'string') {
      if (!printableStrings && !isCloudEventsString(v)) {
        issues.error(
          name,
          'string-characters',
          'CE-2',
          `Extension '${printable(name)}' contains control characters, Unicode noncharacters or unpaired surrogates.`,
        );
      }
    } else if (typeof v === 'number') {
      if (!isInt32(v)) {
        issues.error(
          name,
          'integer',
          'CE-2',
          `Extension '${printable(name)}' is a number outside the CloudEvents Integer type (a whole number in the signed 32-bit range).`,
        );
      }
    } else if (typeof v !== 'boolean') {
      issues.error(
        name,
        'attribute-type',
        'CE-2',
        `Extension '${printable(name)}' is ${describeValue(v)}; attribute values are strings, integers or booleans.`,
      );
      continue;
    }
    if (validName) attributes[name] = v as AttributeValue;
  }

  if (requiredPresent < REQUIRED.length) {
    for (const [name, requirement] of REQUIRED) {
      if (event[name] === undefined || event[name] === null) {
        issues.error(name, 'required', requirement, `${name} is required.`);
      }
    }
  }

  const sequence = attributes['sequence'];
  const sequenceType = attributes['sequencetype'];
  if (sequenceType === 'Integer' && typeof sequence === 'string' && !isInt32String(sequence)) {
    issues.error(
      'sequence',
      'integer-sequence',
      'CE-12',
      `With sequencetype 'Integer', sequence must be a signed 32-bit integer written as a string, got '${printable(sequence)}'.`,
    );
  }
  if (sequenceType !== undefined && sequence === undefined) {
    issues.warning(
      'sequencetype',
      'sequence-missing',
      'CE-12',
      'sequencetype is set but there is no sequence for it to describe.',
    );
  }

  if (hasData && hasDataBase64) {
    issues.error(DATA, 'data-exclusive', 'JSON-2', 'An event carries either data or data_base64, never both.');
  }
  const contentType = attributes['datacontenttype'];
  if (
    hasData &&
    event[DATA] !== null &&
    typeof contentType === 'string' &&
    typeof event[DATA] !== 'string' &&
    !isJsonContentType(contentType)
  ) {
    issues.warning(
      DATA,
      'data-representation',
      'JSON-2',
      `datacontenttype '${contentType}' is not JSON, so data should be a JSON string.`,
    );
  }
  return attributes;
}

/** CE-1 for an extension's name: reported when invalid, warned about when long; whether it is valid. */
function checkExtensionName(name: string, issues: IssueCollector): boolean {
  if (!isAttributeName(name)) {
    issues.error(
      name,
      'attribute-name',
      'CE-1',
      `Attribute name '${printable(name)}' may only use the characters a-z and 0-9.`,
    );
    return false;
  }
  if (name.length > MAX_RECOMMENDED_NAME_LENGTH) {
    issues.warning(
      name,
      'attribute-name-length',
      'CE-1',
      `Attribute name '${printable(name)}' is longer than ${MAX_RECOMMENDED_NAME_LENGTH} characters; names SHOULD be terse.`,
    );
  }
  return true;
}

function checkKnownAttribute(name: string, v: string, issues: IssueCollector): void {
  switch (name) {
    case 'id':
      if (v === '') issues.error(name, 'non-empty', 'CE-3', 'id must be a non-empty string.');
      return;
    case 'source':
      if (v === '') issues.error(name, 'non-empty', 'CE-4', 'source must be a non-empty URI-reference.');
      else if (!isUriReference(v))
        issues.error(
          name,
          'uri-reference',
          'CE-4',
          'source must be a URI-reference (RFC 3986 §4.1); non-ASCII characters and spaces must be percent-encoded.',
        );
      else if (!isNldUrn(v))
        issues.warning(
          name,
          'nld-urn',
          'CE-4',
          "The NL GOV profile recommends a URN in the 'nld' namespace as source, e.g. urn:nld:oin:<OIN>:systeem:<name>.",
        );
      return;
    case 'specversion':
      if (v !== '1.0')
        issues.error(
          name,
          'specversion',
          'CE-5',
          `Koerier accepts CloudEvents specversion '1.0' only, got '${printable(v)}'.`,
        );
      return;
    case 'type':
      checkType(v, issues);
      return;
    case 'datacontenttype':
      if (!isMediaType(v)) {
        issues.error(
          name,
          'media-type',
          'CE-7',
          `datacontenttype '${printable(v)}' is not an RFC 2046 media type (type/subtype with optional parameters).`,
        );
      } else if (!isJsonContentType(v)) {
        // NL profile §3.4.1.1: "JSON-format SHOULD be used".
        issues.warning(name, 'json-preferred', 'CE-7', 'The NL GOV profile recommends JSON as the data format.');
      }
      return;
    case 'dataschema':
      if (v === '') issues.error(name, 'non-empty', 'CE-8', 'dataschema must be a non-empty absolute URI.');
      else if (!isAbsoluteUri(v)) {
        issues.error(
          name,
          'absolute-uri',
          'CE-8',
          hasScheme(v) && isUriReference(v)
            ? 'dataschema must be an absolute URI (RFC 3986 §4.3), which has no fragment.'
            : 'dataschema must be an absolute URI (RFC 3986 §4.3): a scheme, then the rest percent-encoded.',
        );
      }
      return;
    case 'subject':
      if (v === '') issues.error(name, 'non-empty', 'CE-9', 'subject, when present, must be a non-empty string.');
      return;
    case 'time':
      if (!isRfc3339Timestamp(v))
        issues.error(
          name,
          'timestamp',
          'CE-10',
          `time '${printable(v)}' is not an RFC 3339 timestamp such as 2021-12-10T17:31:00Z (seconds and a zone offset are required).`,
        );
      return;
    case 'dataref':
      if (!isUriReference(v))
        issues.error(name, 'uri-reference', 'CE-11', 'dataref must be a URI-reference (RFC 3986 §4.1).');
      return;
    case 'sequence':
      if (v === '') issues.error(name, 'non-empty', 'CE-12', 'sequence must be a non-empty string.');
      return;
    case 'sequencetype':
      if (v === '') issues.error(name, 'non-empty', 'CE-12', 'sequencetype, when present, must be a non-empty string.');
      return;
  }
}

/** CE-6: non-empty, reverse-DNS (NL profile MUST) and at most one `v<digits>` version. */
function checkType(v: string, issues: IssueCollector): void {
  if (v === '') {
    issues.error('type', 'non-empty', 'CE-6', 'type must be a non-empty string.');
    return;
  }
  if (!isReverseDnsName(v)) {
    issues.error(
      'type',
      'reverse-dns',
      'CE-6',
      `type '${printable(v)}' is not in reverse domain name notation (NL GOV profile §3.3.4): dot-separated labels of letters, digits and hyphens (after the first two also '_'), each 1 to 63 characters, none starting or ending with a hyphen, the first starting with a letter; e.g. nl.brp.persoon-verhuisd.`,
    );
  }
  const version = typeVersionProblem(v);
  if (version === 'several-versions') {
    issues.error('type', 'single-version', 'CE-6', 'type may carry only one version number (NL GOV profile).');
  } else if (version === 'version-format') {
    issues.error(
      'type',
      'version-format',
      'CE-6',
      "A version in type is one number prefixed by the letter 'v', as its own segment, e.g. nl.brp.persoon-verhuisd.v2.",
    );
  }
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'a number' : 'a non-integer number';
  return `a ${typeof v === 'object' ? 'JSON object' : typeof v}`;
}
