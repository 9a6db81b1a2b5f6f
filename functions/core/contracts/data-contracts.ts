/**
 * Contracts at work (issue 14, item 3): the ingest checks each event's `data` against the payload
 * schema of the contract message its type is bound to. The bindings are a cached snapshot, read
 * again after the refresh interval as the partner directory is; a message's schema is compiled
 * with Ajv once per contract version and kept (a published version never changes), so a request
 * pays for validation only, never for compiling.
 *
 * Ajv itself is loaded on the first compile, not when the module is: loading and setting it up
 * took about 16 ms of the ingest's cold start (issue 15, item 4), which a deployment without
 * bindings, and a container whose events have no bound type, never needs.
 *
 * Issue 28, item 6: a partner's schema must not stall the shared ingest. Its regular expressions
 * run on RE2 (./linear-patterns.ts), in time linear in the data; the validators of every bound
 * message are compiled as soon as the bindings are read, not when an event of the type first
 * arrives; and a schema that cannot be compiled or is past `PAYLOAD_CAP` (stored before the
 * register checked them) is remembered as refusing every event with that finding, never compiled
 * again on each event.
 */
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { AcceptedEvent } from '../cloudevents/accepted-event.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { bindingChecks, type ContractBinding } from './contract.js';
import { expansionRefusal, PAYLOAD_CAP } from './expanded-size.js';
import type { ContractDocuments, ContractStore } from './ports.js';

type FormatsPlugin = (ajv: Ajv) => Ajv;

/** Validators kept per container: a few hundred compiled schemas are a few megabytes at most. */
const MAX_CACHED_VALIDATORS = 256;
/** Violations reported per event: enough to fix it, bounded like every problem's list. */
const MAX_VIOLATIONS_PER_EVENT = 20;

export interface DataContractFinding {
  /** Position in a batch. */
  readonly index?: number;
  /** JSON Pointer into the event (`/data/...`). */
  readonly pointer: string;
  /** Ajv's keyword: `required`, `type`, `enum`, … */
  readonly rule: string;
  readonly message: string;
  /** `<contract>@<version>#<message>` */
  readonly contract: string;
}

export interface DataContractOutcome {
  /** Findings under bindings in `enforce` mode: the request is refused. */
  readonly violations: readonly DataContractFinding[];
  /** Findings under bindings in `warn` mode: accepted, and said in the 202. */
  readonly warnings: readonly DataContractFinding[];
}

export interface DataContractsDependencies {
  readonly store: Pick<ContractStore, 'listBindings'>;
  readonly documents: Pick<ContractDocuments, 'getSchemas'>;
  readonly refreshMs: number;
  readonly clock: Clock;
  readonly log: Log;
}

export class DataContracts {
  private cached: { readonly bindings: ReadonlyMap<string, ContractBinding>; readonly readAt: number } | undefined;
  private reading: Promise<ReadonlyMap<string, ContractBinding>> | undefined;
  private readonly validators = new Map<string, Promise<Validator | undefined>>();
  /** The validators compiled so far, for the path every request takes without awaiting. */
  private readonly compiled = new Map<string, Validator>();
  private ajv: Promise<Ajv> | undefined;

  constructor(private readonly deps: DataContractsDependencies) {}

  /** The bindings as of at most `refreshMs` ago. */
  async bindings(): Promise<ReadonlyMap<string, ContractBinding>> {
    const now = this.deps.clock();
    if (this.cached && now - this.cached.readAt < this.deps.refreshMs) return this.cached.bindings;
    this.reading ??= this.deps.store
      .listBindings()
      .then((list) => {
        const bindings = new Map(
          list.filter((binding) => binding.mode !== 'off').map((binding) => [binding.type, binding]),
        );
        this.cached = { bindings, readAt: now };
        // Compiled now, ahead of the events that need them; a failure is logged and tried again on the next event of the type.
        for (const binding of bindings.values()) {
          this.validatorFor(binding).catch((error: unknown) =>
            this.deps.log.warn('contract schema not compiled', { type: binding.type, error: String(error) }),
          );
        }
        return bindings;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  /**
   * Checks the events whose type is bound (`warn` or `enforce`) by a binding that checks what
   * `publisher` sends (`bindingChecks`: its own, or an operator's); events of other types cost a
   * map lookup.
   */
  async check(events: readonly AcceptedEvent[], batch: boolean, publisher: string): Promise<DataContractOutcome> {
    const bindings = await this.bindings();
    const violations: DataContractFinding[] = [];
    const warnings: DataContractFinding[] = [];
    if (bindings.size === 0) return { violations, warnings };
    for (const [index, event] of events.entries()) {
      const binding = bindings.get(event.type);
      if (!binding || !bindingChecks(binding, publisher)) continue;
      const findings = await this.findings(event, binding, batch ? index : undefined);
      (binding.mode === 'enforce' ? violations : warnings).push(...findings);
    }
    return { violations, warnings };
  }

  private async findings(
    event: AcceptedEvent,
    binding: ContractBinding,
    index: number | undefined,
  ): Promise<DataContractFinding[]> {
    const contract = `${binding.contract}@${binding.version}#${binding.message}`;
    const at = (pointer: string, rule: string, message: string): DataContractFinding => ({
      ...(index === undefined ? {} : { index }),
      pointer,
      rule,
      message,
      contract,
    });
    const validate = this.compiled.get(contract) ?? (await this.validatorFor(binding));
    if (!validate)
      return [at('/data', 'contract-unavailable', `the payload schema of ${contract} is not in the register`)];
    if ('refusal' in validate) return [at('/data', validate.refusal.rule, `${contract}: ${validate.refusal.message}`)];
    const parsed = JSON.parse(event.json) as Record<string, unknown>;
    if (!Object.hasOwn(parsed, 'data')) {
      if (typeof parsed['dataref'] === 'string')
        return [at('/dataref', 'data-by-reference', 'data sent by reference is not checked against the contract')];
      return [
        at(
          Object.hasOwn(parsed, 'data_base64') ? '/data_base64' : '/data',
          'data-not-json',
          'the contract describes JSON data, and this event has none',
        ),
      ];
    }
    if (validate(parsed['data'])) return [];
    return (validate.errors ?? [])
      .slice(0, MAX_VIOLATIONS_PER_EVENT)
      .map((error) => at(pointerOf(error), error.keyword, messageOf(error)));
  }

  private validatorFor(binding: ContractBinding): Promise<Validator | undefined> {
    const key = `${binding.contract}@${binding.version}#${binding.message}`;
    let validator = this.validators.get(key);
    if (!validator) {
      validator = this.compile(binding);
      if (this.validators.size >= MAX_CACHED_VALIDATORS) {
        const oldest = this.validators.keys().next().value!;
        this.validators.delete(oldest);
        this.compiled.delete(oldest);
      }
      this.validators.set(key, validator);
      // A failed read is tried again on the next event, not remembered.
      validator.then(
        (compiled) => (compiled ? this.compiled.set(key, compiled) : this.validators.delete(key)),
        () => this.validators.delete(key),
      );
    }
    return validator;
  }

  private async compile(binding: ContractBinding): Promise<Validator | undefined> {
    const schemas = await this.deps.documents.getSchemas(binding.contract, binding.version);
    const schema = schemas?.[binding.message];
    if (schema === undefined) return undefined;
    const tooLarge = expansionRefusal(schema, PAYLOAD_CAP, 'the payload schema');
    if (tooLarge) return { refusal: { rule: 'contract-too-large', message: tooLarge } };
    // Compiled outside Ajv's own cache (keyed by the schema object): this map decides how long it lives.
    const {
      $schema: _dialect,
      $id: _id,
      ...body
    } = (typeof schema === 'object' ? schema : {}) as Record<string, unknown>;
    const ajv = await (this.ajv ??= loadAjv());
    try {
      return ajv.compile(typeof schema === 'boolean' ? schema : body);
    } catch (error) {
      return {
        refusal: {
          rule: 'contract-uncompilable',
          message: `the payload schema cannot be compiled: ${error instanceof Error ? error.message : String(error)}`,
        },
      };
    }
  }
}

/** A compiled schema, or why it is not one: remembered as the validator is, so it costs nothing again. */
type Validator = ValidateFunction | { readonly refusal: { readonly rule: string; readonly message: string } };

async function loadAjv(): Promise<Ajv> {
  // Both are CommonJS, so only their default export is there in every host: the bundles put each in a chunk of its own, which
  // exports `module.exports` as its default and nothing by name. Ajv's `module.exports` is the class, which has `.Ajv` too.
  const [{ default: ajv }, formats, { linearRegExpEngine }] = await Promise.all([
    import('ajv'),
    import('ajv-formats'),
    import('./linear-patterns.js'),
  ]);
  const { Ajv } = ajv;
  // ajv-formats' default export arrives as the module under Node's ESM interop and in a chunk, as the function when esbuild inlines it.
  const addFormats = ((formats.default as unknown as { default?: FormatsPlugin }).default ??
    formats.default) as unknown as FormatsPlugin;
  return addFormats(
    new Ajv({ allErrors: true, strict: false, validateFormats: true, code: { regExp: linearRegExpEngine } }),
  );
}

/** Where in the event: `/data` and the instance path, with the missing member for `required`. */
function pointerOf(error: ErrorObject): string {
  const missing =
    error.keyword === 'required'
      ? `/${String((error.params as { missingProperty?: string }).missingProperty)
          .replace(/~/g, '~0')
          .replace(/\//g, '~1')}`
      : '';
  return `/data${error.instancePath}${missing}`;
}

function messageOf(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'enum')
    return `must be one of ${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)}`;
  return error.message ?? error.keyword;
}
