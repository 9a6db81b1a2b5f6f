/**
 * A fix for dynalite 4 applied where the emulator starts, so the laptop keeps one code path (the
 * real SDK against dynalite) without a fork. See docs/upstream/dynalite-iterator-leak.md.
 *
 * dynalite turns abstract-level iterators into streams (`createKeyStream`, `createValueStream`) and
 * frees them in the stream's `destroy` by calling `iterator.return()`. abstract-level 3, which
 * dynalite 4 uses, has no `return` on its iterators — it has `close()` — so the call is skipped and
 * every Query and Scan leaves its iterator open, and with it a LevelDB snapshot (the files and
 * write buffers it pins are never freed: memory and disk grow with every query).
 *
 * The shim gives abstract-level's iterators the `return()` dynalite calls, closing the iterator.
 * It also counts the iterators a database holds open, for the test that proves the leak is gone.
 */
import { createRequire } from 'node:module';

interface AbstractLevelModule {
  readonly AbstractLevel: {
    prototype: { attachResource(resource: unknown): void; detachResource(resource: unknown): void };
  };
  readonly AbstractIterator: { prototype: object };
}

interface ClosableIterator {
  close(): Promise<void>;
  return?: () => Promise<IteratorReturnResult<undefined>>;
}

/** The same iterators the databases hold in their own resource sets, no more: no extra references. */
const openIterators = new Set<unknown>();
let installed = false;

/** The abstract-level dynalite itself loads (through `level` and `classic-level`). */
function abstractLevelOfDynalite(): AbstractLevelModule {
  const fromHere = createRequire(import.meta.url);
  const fromDynalite = createRequire(fromHere.resolve('dynalite'));
  const fromClassicLevel = createRequire(createRequire(fromDynalite.resolve('level')).resolve('classic-level'));
  return fromClassicLevel('abstract-level') as AbstractLevelModule;
}

/** Idempotent; call before dynalite opens its database. */
export function installDynaliteShims(): void {
  if (installed) return;
  installed = true;
  const { AbstractLevel, AbstractIterator } = abstractLevelOfDynalite();
  // The common base of key, value and entry iterators.
  const iteratorBase = Object.getPrototypeOf(AbstractIterator.prototype) as ClosableIterator;
  if (typeof iteratorBase.return !== 'function') {
    iteratorBase.return = async function (this: ClosableIterator) {
      await this.close();
      return { done: true, value: undefined };
    };
  }
  const isIterator = (resource: unknown) =>
    typeof resource === 'object' && resource !== null && Object.prototype.isPrototypeOf.call(iteratorBase, resource);
  // abstract-level registers every open iterator with its database and removes it on close().
  const { attachResource, detachResource } = AbstractLevel.prototype;
  AbstractLevel.prototype.attachResource = function (resource: unknown) {
    attachResource.call(this, resource);
    if (isIterator(resource)) openIterators.add(resource);
  };
  AbstractLevel.prototype.detachResource = function (resource: unknown) {
    detachResource.call(this, resource);
    openIterators.delete(resource);
  };
}

/** LevelDB iterators open right now, over every dynalite database of this process. */
export function openLevelIterators(): number {
  return openIterators.size;
}
