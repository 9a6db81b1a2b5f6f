/**
 * Every refusal of the contract register's use case, a KoerierError each, with the problem type,
 * status and wording a partner sees. Read by ./http-mapping.ts's readers and by the use case.
 */
import { KoerierError, problem, problems } from '../http/problems.js';
import { invalidContract } from './contract-fields.js';
import type { ContractKind, VersionStatus } from './contract.js';
import type { CompatibilityFinding } from './schema-compatibility.js';

/** Issue 14 item 2: the parser's findings, each as an issue naming where in the document. */
export function invalidDocument(
  kind: ContractKind,
  findings: readonly { message: string; path?: string; rule?: string }[],
): KoerierError {
  const rule = kind === 'asyncapi-data' ? 'asyncapi' : 'openapi';
  return new KoerierError(
    problems.badRequest(
      'contract-document-invalid',
      `The ${rule === 'asyncapi' ? 'AsyncAPI' : 'OpenAPI'} parser refused the document (EDU-21: OpenAPI 3.x for a webhook, AsyncAPI 3.x for business data).`,
      findings.map((finding) => ({
        rule: finding.rule ?? rule,
        requirement: 'EDU-21',
        message: finding.message,
        ...(finding.path === undefined ? {} : { attribute: finding.path }),
      })),
    ),
  );
}

export function contractNotFound(name: string): KoerierError {
  return new KoerierError(problems.notFound(`There is no contract "${name}" in the register.`));
}

export function versionNotFound(name: string, version: string): KoerierError {
  return new KoerierError(problems.notFound(`Contract "${name}" has no version ${version}.`));
}

export function bindingNotFound(type: string): KoerierError {
  return new KoerierError(problems.notFound(`No contract is bound to the event type "${type}".`));
}

/** A published version never changes (EDU-6): a changed document is a new version. */
export function versionImmutable(name: string, version: string): KoerierError {
  return new KoerierError(
    problem(
      409,
      'contract-version-immutable',
      `Version ${version} of "${name}" is published with another document; publish the change as a new version.`,
    ),
  );
}

export function kindMismatch(name: string, kind: ContractKind): KoerierError {
  return new KoerierError(problem(409, 'contract-kind-mismatch', `Contract "${name}" holds ${kind} documents.`));
}

export function ownerRequired(): KoerierError {
  return invalidContract(
    'A new contract needs its owner and contact point (EDU-22): owner {name, email or url} and contact {name, email or url}.',
  );
}

/** Issue 14 item 2: 422 — the request is well-formed, but the change it makes breaks the contract within its major version. */
export function breakingChange(
  name: string,
  version: string,
  previous: string,
  findings: readonly CompatibilityFinding[],
): KoerierError {
  return new KoerierError(
    problem(
      422,
      'contract-change-breaking',
      `Version ${version} of "${name}" breaks ${previous} (neither backward nor forward compatible) within the same major version. Publish it as a new major version, or an admin may force it with ?force=true.`,
      {
        errors: findings.map((finding) => ({
          rule: finding.change,
          requirement: 'EDU-21',
          attribute: finding.pointer || '/',
          message: `${finding.direction}: ${finding.message}`,
        })),
      },
    ),
  );
}

export function statusMoveRefused(from: VersionStatus, to: VersionStatus): KoerierError {
  return new KoerierError(problem(409, 'contract-status-move', `A version that is ${from} cannot become ${to}.`));
}

export function notMaintainer(name: string, maintainer: string | undefined): KoerierError {
  return new KoerierError(
    problems.forbidden(
      `Contract "${name}" is maintained by client "${maintainer ?? ''}": only its maintainer or an operator (admin) may change it or bind it.`,
    ),
  );
}

/** Issue 28, item 7: a binding checks its publisher's own events, so only a client granted sources binds one. */
export function notAPublisher(clientId: string): KoerierError {
  return new KoerierError(
    problems.forbidden(
      `Client "${clientId}" is granted no source to publish under: a binding checks the events of its own sources, so only a publisher (or an operator, admin, for every publisher) may bind a contract to an event type.`,
    ),
  );
}

export function boundByAnother(type: string, publisher: string): KoerierError {
  return new KoerierError(
    problems.forbidden(
      `Event type '${type}' is bound for the events of client "${publisher}": only that client or an operator (admin) may change or remove it.`,
    ),
  );
}

export function boundByOperator(type: string): KoerierError {
  return new KoerierError(
    problems.forbidden(
      `Event type '${type}' is bound by an operator for every publisher: only an operator (admin) may change or remove it.`,
    ),
  );
}

export function forceNeedsAdmin(): KoerierError {
  return new KoerierError(problems.forbidden('Only a client with the admin scope may force a breaking change.'));
}

export function changedMeanwhile(): KoerierError {
  return new KoerierError(
    problem(409, 'contract-changed', 'The contract changed while this request was processed; send it again.'),
  );
}

export function notBindable(detail: string): KoerierError {
  return new KoerierError(problem(409, 'contract-not-bindable', detail));
}
