/**
 * The contract register (issue 14; EDU-6, EDU-21, EDU-22): reading with scope `contracts:read`,
 * publishing, metadata and bindings with `contracts:write`, each change under the Idempotency-Key
 * guard (EDU-IDEM-3). Use cases: functions/core/contracts/contract-register.ts. Koerier's own
 * OpenAPI document is registered on the first request (functions/core/contracts/own-contract.ts).
 */
import { scopes, type Principal } from '../core/auth/access-tokens.js';
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import { openApiDocument } from '../core/api-description/openapi-document.js';
import { ContractRegister } from '../core/contracts/contract-register.js';
import { registerOwnContract } from '../core/contracts/own-contract.js';
import type { ContractConsumer, ContractConsumers, ContractParser } from '../core/contracts/ports.js';
import type { SubscriptionStore } from '../core/subscriptions/store.js';
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard, type Guarded } from './idempotency-guard.js';

/** Pages of subscriptions read to find a contract's consumers: 10,000 subscriptions. */
const CONSUMER_PAGES = 100;

/** What the app reads: its handler (functions/handlers/contracts.ts) must compose a builder for each. */
export type ContractsAppDependencies = Pick<
  KoerierDependencies,
  | GuardedRouteMembers
  | 'clock'
  | 'contractStore'
  | 'contractDocuments'
  | 'contractLifecycle'
  | 'subscriptions'
  | 'partners'
>;

export function contractsApp(deps: ContractsAppDependencies): HttpApp {
  let built: ContractRegister | undefined;
  let ownContract: Promise<boolean> | undefined;
  const parser = parsersOnFirstUse();
  const publishing = () => ({
    store: deps.contractStore,
    documents: deps.contractDocuments,
    parser,
    clock: deps.clock,
  });
  const register = () =>
    (built ??= new ContractRegister({
      ...publishing(),
      publishGrants: async () => (await deps.partners.current()).publishGrants,
      consumers: subscriptionConsumers(deps.subscriptions),
      lifecycle: deps.contractLifecycle,
      log: deps.log,
      baseUrl: deps.config.publicBaseUrl,
    }));
  const ownContractRegistered = () => {
    ownContract ??= registerOwnContract({ ...publishing(), log: deps.log }, ownDocument(deps)).then((done) => {
      if (!done) ownContract = undefined;
      return done;
    });
    return ownContract;
  };

  return async (request) => {
    const route = request.routeKey as RouteKey<'contracts'>;
    const name = request.pathParameters['name'] ?? '';
    const version = request.pathParameters['version'] ?? '';
    const type = request.pathParameters['type'] ?? '';
    switch (route) {
      case 'GET /contracts':
      case 'GET /contracts/{name}':
      case 'GET /contracts/{name}/versions':
      case 'GET /contracts/{name}/versions/{version}':
      case 'GET /contracts/{name}/versions/{version}/document':
      case 'GET /contract-bindings':
      case 'GET /contract-bindings/{type}': {
        const principal = await deps.authenticate(request, scopes.readContracts);
        await ownContractRegistered();
        return read(register(), principal, route, name, version, type);
      }
      case 'PATCH /contracts/{name}':
      case 'PUT /contracts/{name}/versions/{version}':
      case 'PATCH /contracts/{name}/versions/{version}':
      case 'PUT /contract-bindings/{type}':
      case 'DELETE /contract-bindings/{type}': {
        const principal = await deps.authenticate(request, scopes.writeContracts);
        await ownContractRegistered();
        return change(register(), idempotencyGuard(deps, request, { replayHeaders: [] }), principal, route, request, {
          name,
          version,
          type,
        });
      }
      default:
        return unroutedAnswer(request);
    }
  };
}

type ChangeRoute = Exclude<RouteKey<'contracts'>, `GET ${string}`>;

function change(
  registry: ContractRegister,
  guarded: Guarded,
  principal: Principal,
  route: ChangeRoute,
  request: HttpRequest,
  { name, version, type }: { name: string; version: string; type: string },
): Promise<HttpResponse> {
  switch (route) {
    case 'PATCH /contracts/{name}':
      return guarded(principal.clientId, route, () => registry.changeContract(principal, name, request));
    case 'PUT /contracts/{name}/versions/{version}':
      return guarded(principal.clientId, route, () => registry.publish(principal, name, version, request));
    case 'PATCH /contracts/{name}/versions/{version}':
      return guarded(principal.clientId, route, () => registry.changeVersion(principal, name, version, request));
    case 'PUT /contract-bindings/{type}':
      return guarded(principal.clientId, route, () => registry.bind(principal, type, request));
    case 'DELETE /contract-bindings/{type}':
      return guarded(principal.clientId, route, () => registry.unbind(principal, type));
  }
}

type ReadRoute = Extract<RouteKey<'contracts'>, `GET ${string}`>;

function read(
  register: ContractRegister,
  principal: Principal,
  route: ReadRoute,
  name: string,
  version: string,
  type: string,
) {
  switch (route) {
    case 'GET /contracts':
      return register.list();
    case 'GET /contracts/{name}':
      return register.read(principal, name);
    case 'GET /contracts/{name}/versions':
      return register.versions(name);
    case 'GET /contracts/{name}/versions/{version}':
      return register.version(name, version);
    case 'GET /contracts/{name}/versions/{version}/document':
      return register.document(name, version);
    case 'GET /contract-bindings':
      return register.bindings();
    case 'GET /contract-bindings/{type}':
      return register.binding(type);
  }
}

function ownDocument(deps: ContractsAppDependencies) {
  const document = openApiDocument({
    serverUrl: deps.config.publicBaseUrl || undefined,
    tokenUrl: deps.config.auth.tokenUrl,
  });
  const { name, email, url } = document.info.contact;
  return { version: document.info.version, text: JSON.stringify(document), owner: { name, email, url } };
}

/** Who consumes a contract: the subscriptions whose `types` name any of its event types. */
function subscriptionConsumers(subscriptions: SubscriptionStore): ContractConsumers {
  return {
    async consumersOf(types) {
      if (types.length === 0) return [];
      const wanted = new Set(types);
      const consumers: ContractConsumer[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < CONSUMER_PAGES; page++) {
        const { items, cursor: next } = await subscriptions.listAll({ limit: 100, cursor });
        for (const subscription of items) {
          const named = (subscription.types ?? []).filter((type) => wanted.has(type));
          if (named.length > 0)
            consumers.push({ subscriptionId: subscription.id, owner: subscription.owner, types: named });
        }
        if (!next) break;
        cursor = next;
      }
      return consumers;
    },
  };
}

/**
 * The AsyncAPI and OpenAPI parsers are most of this function's code (bench/results/bundles.json);
 * loaded on the first document to check, so a cold start that only reads the register, or finds
 * Koerier's own contract already there, neither reads nor evaluates them: behind this `import()`
 * esbuild puts them in a chunk of their own (lib/bundling.ts; issue 15, item 4).
 */
function parsersOnFirstUse(): ContractParser {
  let loaded: Promise<ContractParser> | undefined;
  return {
    async parse(kind, text, syntax) {
      loaded ??= import('./contract-parsers.js').then(({ contractParser }) => contractParser());
      return (await loaded).parse(kind, text, syntax);
    },
  };
}
