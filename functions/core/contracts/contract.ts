/**
 * The contract register's model (EDU-6, EDU-21, EDU-22): a contract is named, of one kind, owned
 * and with a contact point; its versions are immutable documents with a status of their own.
 */
import type { Verdict, CompatibilityFinding } from './schema-compatibility.js';

/** EDU-21: the OpenAPI document of a webhook, the AsyncAPI document of the business data. */
export const contractKinds = ['openapi-webhook', 'asyncapi-data'] as const;
export type ContractKind = (typeof contractKinds)[number];

export const versionStatuses = ['draft', 'active', 'deprecated', 'retired'] as const;
export type VersionStatus = (typeof versionStatuses)[number];

/** The moves a version's status may make: retired is final; a deprecation may be withdrawn. */
export const statusMoves: Readonly<Record<VersionStatus, readonly VersionStatus[]>> = {
  draft: ['active', 'retired'],
  active: ['deprecated', 'retired'],
  deprecated: ['active', 'retired'],
  retired: [],
};

/** EDU-22: who writes and maintains the specification, and whom to ask. */
export interface ContactPoint {
  readonly name: string;
  readonly email?: string;
  readonly url?: string;
}

export interface ContractRecord {
  readonly name: string;
  readonly kind: ContractKind;
  readonly description?: string;
  readonly owner: ContactPoint;
  readonly contact: ContactPoint;
  /** The highest version published (semver order). */
  readonly latestVersion: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly updatedBy: string;
  /**
   * The client that published the contract's first version: it, and operators (`admin`), may
   * publish further versions, change the metadata and statuses and bind the contract to event
   * types; other clients with `contracts:write` may not (issue 14). Absent on contracts registered
   * before this rule, which any writer may still change.
   */
  readonly maintainer?: string;
}

/** Whether `principal` may change `contract` (its maintainer, an operator, or anyone for a contract from before maintainers). */
export function mayMaintain(
  principal: { readonly clientId: string; readonly scopes: ReadonlySet<string> },
  contract: Pick<ContractRecord, 'maintainer'>,
): boolean {
  return (
    principal.scopes.has('admin') || contract.maintainer === undefined || contract.maintainer === principal.clientId
  );
}

/** One message of an AsyncAPI document, as the register knows it; its payload schema is in the documents store. */
export interface MessageSummary {
  readonly id: string;
  readonly name?: string;
  readonly hasPayload: boolean;
}

export interface MessageCompatibility {
  readonly message: string;
  readonly verdict: Verdict | 'removed' | 'added';
  readonly findings: readonly CompatibilityFinding[];
}

/** What publishing a version found against the one before it (AsyncAPI payload schemas). */
export interface VersionCompatibility {
  readonly previous: string;
  readonly verdict: Verdict;
  readonly messages: readonly MessageCompatibility[];
  /** Set when an admin published a breaking change within a major version anyway. */
  readonly forcedBy?: string;
}

export interface VersionRecord {
  readonly contract: string;
  readonly version: string;
  readonly status: VersionStatus;
  /** RFC 3339 date-time after which the version is retired; required while deprecated. */
  readonly sunset?: string;
  readonly eventTypes: readonly string[];
  /** RFC 9530 form: `sha-256=:<base64>:` of the document's bytes as published. */
  readonly checksum: string;
  readonly mediaType: string;
  readonly size: number;
  readonly specVersion: string;
  readonly messages: readonly MessageSummary[];
  readonly compatibility?: VersionCompatibility;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly publishedBy: string;
  readonly updatedBy: string;
}

export const validationModes = ['off', 'warn', 'enforce'] as const;
export type ValidationMode = (typeof validationModes)[number];

/**
 * Whose events of the type a binding checks (issue 28, item 7). Publish grants tie a client to
 * sources, never to types: any publisher may send any type, so a binding that checked every event
 * of its type let one tenant refuse another's events. `publisher`: only the events its publisher
 * sends, those of the sources it is granted (grants of two clients never overlap, and the ingest
 * refuses an event whose source its sender is not granted, so these are exactly the events that
 * client publishes); made by a client that is granted sources. `every-publisher`: every event of
 * the type; made by an operator. Absent: a binding made before this rule, by any client with
 * `contracts:write`; it still checks every publisher's events, and any publisher may remove it.
 */
export type BindingScope = 'publisher' | 'every-publisher';

/** Per event type: the contract message its `data` follows, and what the ingest does about it. */
export interface ContractBinding {
  readonly type: string;
  readonly contract: string;
  readonly version: string;
  readonly message: string;
  readonly mode: ValidationMode;
  /** Absent on a binding made before issue 28 (see `BindingScope`). */
  readonly scope?: BindingScope;
  /** With scope `publisher`: the client whose events it checks, the one that bound it. */
  readonly publisher?: string;
  readonly updatedAt: string;
  readonly updatedBy: string;
}

/** Whether the ingest checks an event that `publisher` sends against `binding`. */
export function bindingChecks(binding: Pick<ContractBinding, 'scope' | 'publisher'>, publisher: string): boolean {
  return binding.scope !== 'publisher' || binding.publisher === publisher;
}

export const SEMVER = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;
export const CONTRACT_NAME = /^[a-z0-9](?:[a-z0-9.-]{0,126}[a-z0-9])?$/;

export function isSemver(version: string): boolean {
  return version.length <= 64 && SEMVER.test(version);
}

export function majorOf(version: string): number {
  return Number(version.split('.')[0]);
}

/** Semver precedence (semver.org §11): numbers, then a version without prerelease above one with it. */
export function compareVersions(a: string, b: string): number {
  const [, ...partsA] = SEMVER.exec(a) ?? [];
  const [, ...partsB] = SEMVER.exec(b) ?? [];
  for (let index = 0; index < 3; index++) {
    const difference = Number(partsA[index]) - Number(partsB[index]);
    if (difference !== 0) return difference;
  }
  const [preA, preB] = [partsA[3], partsB[3]];
  if (preA === preB) return 0;
  if (preA === undefined) return 1;
  if (preB === undefined) return -1;
  const idsA = preA.split('.');
  const idsB = preB.split('.');
  for (let index = 0; index < Math.min(idsA.length, idsB.length); index++) {
    const [x, y] = [idsA[index]!, idsB[index]!];
    if (x === y) continue;
    const [numericX, numericY] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (numericX && numericY) return Number(x) - Number(y);
    if (numericX !== numericY) return numericX ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return idsA.length - idsB.length;
}

/** What a deprecation tells the consumers of a contract version (ports.ts `ContractLifecycleHook`). */
export interface DeprecationNotice {
  readonly contract: string;
  readonly version: string;
  readonly sunset: string;
  readonly eventTypes: readonly string[];
  readonly consumers: readonly { readonly subscriptionId: string; readonly owner: string }[];
  readonly deprecatedBy: string;
  readonly at: string;
}
