/**
 * The contract register's use cases (EDU-6, EDU-21, EDU-22, issue 14): list contracts, a
 * contract with its consumers, its versions, one version and its document; publish a version,
 * change metadata, and bind event types to a contract message for the ingest. Refusals are thrown
 * (./http-mapping.ts); the app authenticates and runs the changes under the Idempotency-Key guard.
 */
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import type { PublishGrants } from '../auth/publish-grants.js';
import type { Log } from '../ports/log.js';
import {
  compareVersions,
  mayMaintain,
  statusMoves,
  type ContractBinding,
  type ContractRecord,
  type VersionRecord,
} from './contract.js';
import * as http from './http-mapping.js';
import { ContractChangedError, type ContractConsumers, type ContractLifecycleHook } from './ports.js';
import { publishVersion, type PublishDependencies } from './publish-version.js';

export interface ContractRegisterDependencies extends PublishDependencies {
  /** Every client's publish grants as the functions decide with them (the partner directory): who may bind a type for its events. */
  publishGrants(): Promise<PublishGrants>;
  readonly consumers: ContractConsumers;
  readonly lifecycle: ContractLifecycleHook;
  readonly log: Log;
  /** Where the register is served, for `Location` and document links. */
  readonly baseUrl: string;
}

export class ContractRegister {
  constructor(private readonly deps: ContractRegisterDependencies) {}

  async list(): Promise<HttpResponse> {
    const contracts = await this.deps.store.listContracts();
    return jsonResponse(200, {
      contracts: contracts.sort((a, b) => a.name.localeCompare(b.name)).map((contract) => this.contractView(contract)),
    });
  }

  /**
   * The contract, its versions and who consumes it: the subscriptions that name any of its event
   * types. A caller sees only its own subscriptions among them, an operator (`admin`) every one, as
   * `GET /subscriptions` shows other owners' subscriptions only to operators (issue 28, item 12):
   * which other clients take which event types is theirs to tell, not the register's.
   */
  async read(principal: Principal, name: string): Promise<HttpResponse> {
    const contract = await this.contract(name);
    const versions = await this.sortedVersions(name);
    const everyConsumer = await this.deps.consumers.consumersOf([
      ...new Set(versions.flatMap((version) => version.eventTypes)),
    ]);
    const consumers = hasScope(principal, scopes.admin)
      ? everyConsumer
      : everyConsumer.filter((consumer) => consumer.owner === principal.clientId);
    return jsonResponse(200, {
      ...this.contractView(contract),
      versions: versions.map((version) => this.versionView(version)),
      consumers,
    });
  }

  async versions(name: string): Promise<HttpResponse> {
    await this.contract(name);
    return jsonResponse(200, {
      versions: (await this.sortedVersions(name)).map((version) => this.versionView(version)),
    });
  }

  async version(name: string, version: string): Promise<HttpResponse> {
    return jsonResponse(200, this.versionView(await this.versionRecord(name, version)));
  }

  /**
   * The document as published, byte for byte, for people and for automated processes (EDU-6 MAY).
   * A version never changes, so it may be kept for a year; but only by the client that asked
   * (`private`, issue 28 item 14): the answer needs a token, and a shared cache would hand it to
   * whoever asks next without one.
   */
  async document(name: string, version: string): Promise<HttpResponse> {
    const record = await this.versionRecord(name, version);
    const text = await this.deps.documents.getDocument(name, version);
    if (text === undefined) throw http.versionNotFound(name, version);
    return {
      status: 200,
      headers: {
        'content-type': record.mediaType,
        etag: `"${record.checksum}"`,
        'repr-digest': record.checksum,
        'cache-control': 'private, max-age=31536000, immutable',
      },
      body: text,
    };
  }

  async publish(principal: Principal, name: string, version: string, request: HttpRequest): Promise<HttpResponse> {
    const input = http.readPublishInput(request);
    const published = await publishVersion(
      this.deps,
      principal,
      http.checkedName(name),
      http.checkedVersion(version),
      input,
      request.query['force'] === 'true',
    );
    if (published.created) {
      this.deps.log.info('contract version published', {
        contract: name,
        version,
        by: principal.clientId,
        verdict: published.version.compatibility?.verdict,
        forcedBy: published.version.compatibility?.forcedBy,
      });
    }
    const location = `${this.deps.baseUrl}/contracts/${name}/versions/${version}`;
    return jsonResponse(published.created ? 201 : 200, this.versionView(published.version), { location });
  }

  async changeContract(principal: Principal, name: string, request: HttpRequest): Promise<HttpResponse> {
    const patch = http.readContractPatch(request);
    const current = await this.maintained(principal, name);
    const next: ContractRecord = { ...current, ...patch, updatedAt: this.now(), updatedBy: principal.clientId };
    await this.saved(() => this.deps.store.saveContract(next, current));
    this.deps.log.info('contract metadata changed', {
      contract: name,
      by: principal.clientId,
      members: Object.keys(patch),
    });
    return jsonResponse(200, this.contractView(next));
  }

  /** Status, sunset and event types; a deprecation tells the consumers through the lifecycle hook. */
  async changeVersion(
    principal: Principal,
    name: string,
    version: string,
    request: HttpRequest,
  ): Promise<HttpResponse> {
    const patch = http.readVersionPatch(request);
    await this.maintained(principal, name);
    const current = await this.versionRecord(name, version);
    const status = patch.status ?? current.status;
    if (status !== current.status && !statusMoves[current.status].includes(status))
      throw http.statusMoveRefused(current.status, status);
    const sunset = patch.sunset ?? (status === 'deprecated' ? current.sunset : undefined);
    if (status === 'deprecated' && sunset === undefined)
      throw http.invalidContract('A deprecated version needs a sunset date (RFC 3339).');
    const { sunset: _previousSunset, ...kept } = current;
    const at = this.now();
    const next: VersionRecord = {
      ...kept,
      status,
      ...(sunset === undefined ? {} : { sunset }),
      ...(patch.eventTypes ? { eventTypes: patch.eventTypes } : {}),
      updatedAt: at,
      updatedBy: principal.clientId,
    };
    await this.saved(() => this.deps.store.saveVersion(next, current));
    this.deps.log.info('contract version changed', { contract: name, version, by: principal.clientId, status });
    if (status === 'deprecated' && current.status !== 'deprecated') {
      const consumers = await this.deps.consumers.consumersOf(next.eventTypes);
      await this.deps.lifecycle.contractVersionDeprecated({
        contract: name,
        version,
        sunset: sunset!,
        eventTypes: next.eventTypes,
        consumers: consumers.map(({ subscriptionId, owner }) => ({ subscriptionId, owner })),
        deprecatedBy: principal.clientId,
        at,
      });
    }
    return jsonResponse(200, this.versionView(next));
  }

  async bindings(): Promise<HttpResponse> {
    const bindings = await this.deps.store.listBindings();
    return jsonResponse(200, { bindings: bindings.sort((a, b) => a.type.localeCompare(b.type)) });
  }

  async binding(type: string): Promise<HttpResponse> {
    const binding = await this.deps.store.getBinding(http.checkedType(type));
    if (!binding) throw http.bindingNotFound(type);
    return jsonResponse(200, binding);
  }

  /**
   * Issue 14 item 3: the event type's `data` follows this message of an AsyncAPI version, checked
   * by the ingest as `mode` says. Issue 28, item 7: for the events of the caller's own sources
   * (scope `publisher`), and so only by a client granted sources; an operator's binding checks
   * every publisher's (`every-publisher`). See `BindingScope` in contract.ts.
   */
  async bind(principal: Principal, type: string, request: HttpRequest): Promise<HttpResponse> {
    const input = http.readBindingInput(request);
    const contract = await this.maintained(principal, input.contract);
    const operator = hasScope(principal, scopes.admin);
    if (!operator && !(await this.isPublisher(principal))) throw http.notAPublisher(principal.clientId);
    const boundType = await this.rebindable(principal, type);
    if (contract.kind !== 'asyncapi-data')
      throw http.notBindable(
        `Contract "${contract.name}" is an OpenAPI webhook contract; event data follows an AsyncAPI message.`,
      );
    const version = await this.versionRecord(input.contract, input.version);
    if (version.status === 'retired')
      throw http.notBindable(`Version ${version.version} of "${contract.name}" is retired.`);
    const withPayload = version.messages.filter((message) => message.hasPayload);
    const message = input.message
      ? withPayload.find((candidate) => candidate.id === input.message)
      : (withPayload.find((candidate) => candidate.name === type) ??
        (withPayload.length === 1 ? withPayload[0] : undefined));
    if (!message) {
      throw http.notBindable(
        `Name the message whose payload the event's data follows: one of ${withPayload.map((candidate) => candidate.id).join(', ') || '(none with a payload)'}.`,
      );
    }
    const binding: ContractBinding = {
      type: boundType,
      contract: contract.name,
      version: version.version,
      message: message.id,
      mode: input.mode,
      ...(operator
        ? { scope: 'every-publisher' as const }
        : { scope: 'publisher' as const, publisher: principal.clientId }),
      updatedAt: this.now(),
      updatedBy: principal.clientId,
    };
    await this.deps.store.putBinding(binding);
    this.deps.log.info('contract bound to event type', {
      type,
      contract: contract.name,
      version: version.version,
      mode: input.mode,
      scope: binding.scope,
      by: principal.clientId,
    });
    return jsonResponse(200, binding);
  }

  async unbind(principal: Principal, type: string): Promise<HttpResponse> {
    if (!(await this.deps.store.deleteBinding(await this.rebindable(principal, type))))
      throw http.bindingNotFound(type);
    this.deps.log.info('contract unbound from event type', { type, by: principal.clientId });
    return { status: 204, headers: {}, body: '' };
  }

  private contractView(contract: ContractRecord): Record<string, unknown> {
    return { ...contract, href: `${this.deps.baseUrl}/contracts/${contract.name}` };
  }

  private versionView(version: VersionRecord): Record<string, unknown> {
    return {
      ...version,
      document: `${this.deps.baseUrl}/contracts/${version.contract}/versions/${version.version}/document`,
    };
  }

  /**
   * The type, checked, when `principal` may replace or remove its binding (issue 28, item 7): an
   * operator always; a publisher's binding only its publisher, whose events it checks; an
   * operator's binding only an operator; one made before the rule, which checks every
   * publisher's events, any client granted sources, or the maintainer of its contract. Else the 403.
   */
  private async rebindable(principal: Principal, type: string): Promise<string> {
    const checked = http.checkedType(type);
    const bound = await this.deps.store.getBinding(checked);
    if (!bound || hasScope(principal, scopes.admin)) return checked;
    if (bound.scope === 'publisher') {
      if (bound.publisher !== principal.clientId) throw http.boundByAnother(checked, bound.publisher ?? '');
    } else if (bound.scope === 'every-publisher') {
      throw http.boundByOperator(checked);
    } else if (!(await this.isPublisher(principal))) {
      await this.maintained(principal, bound.contract);
    }
    return checked;
  }

  /** Whether `principal` is granted any source to publish under (the partner directory). */
  private async isPublisher(principal: Principal): Promise<boolean> {
    const grants = await this.deps.publishGrants();
    return Object.hasOwn(grants, principal.clientId) && grants[principal.clientId]!.length > 0;
  }

  /** The contract, when `principal` may change it (contract.ts, `mayMaintain`); else the 403. */
  private async maintained(principal: Principal, name: string): Promise<ContractRecord> {
    const contract = await this.contract(name);
    if (!mayMaintain(principal, contract)) throw http.notMaintainer(contract.name, contract.maintainer);
    return contract;
  }

  private async contract(name: string): Promise<ContractRecord> {
    const contract = await this.deps.store.getContract(http.checkedName(name));
    if (!contract) throw http.contractNotFound(name);
    return contract;
  }

  private async versionRecord(name: string, version: string): Promise<VersionRecord> {
    const record = await this.deps.store.getVersion(http.checkedName(name), http.checkedVersion(version));
    if (!record) throw http.versionNotFound(name, version);
    return record;
  }

  private async sortedVersions(name: string): Promise<VersionRecord[]> {
    return (await this.deps.store.listVersions(name)).sort((a, b) => compareVersions(a.version, b.version));
  }

  private async saved(save: () => Promise<void>): Promise<void> {
    try {
      await save();
    } catch (error) {
      if (error instanceof ContractChangedError) throw http.changedMeanwhile();
      throw error;
    }
  }

  private now(): string {
    return new Date(this.deps.clock()).toISOString();
  }
}
