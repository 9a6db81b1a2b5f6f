/** Core refuses by throwing a KoerierError (docs/ARCHITECTURE.md, "Failures"); these catch it for assertions. */
import type { HttpResponse } from '../../functions/core/http/messages.js';
import { answered, KoerierError } from '../../functions/core/http/problems.js';

/** The KoerierError `work` throws; fails the test when it returns or throws anything else. */
export function refusalOf(work: () => unknown): KoerierError {
  let result: unknown;
  try {
    result = work();
  } catch (error) {
    if (error instanceof KoerierError) return error;
    throw error;
  }
  throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
}

/** The KoerierError `work` rejects with; fails the test when it resolves or rejects with anything else. */
export async function asyncRefusalOf(work: () => Promise<unknown>): Promise<KoerierError> {
  let result: unknown;
  try {
    result = await work();
  } catch (error) {
    if (error instanceof KoerierError) return error;
    throw error;
  }
  throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
}

/**
 * `target` with each of its methods answered as the HTTP adapter answers an app: a KoerierError it
 * throws becomes its problem+json response (`answered`), so a use case's tests read its answers.
 */
export function answering<T extends object>(target: T): T {
  return new Proxy(target, {
    get(object, name, receiver) {
      const member: unknown = Reflect.get(object, name, receiver);
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) =>
        answered(() => (member as (...a: unknown[]) => Promise<HttpResponse>).apply(object, args));
    },
  });
}
