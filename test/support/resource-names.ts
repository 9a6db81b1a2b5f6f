/**
 * Resource names from this process's environment, for tests that reach a resource beside the
 * functions under test (the handler harness and the test host put the emulators' names there).
 * The functions themselves use `config.resources`, loaded once by `loadConfig(env)`.
 */
import { resourceNamesFrom, type ResourceNames } from '../../functions/config.js';

export const resourceNames: ResourceNames = {
  table: (name) => resourceNamesFrom(process.env).table(name),
  queueUrl: (name) => resourceNamesFrom(process.env).queueUrl(name),
  deadLetterQueueUrl: (name) => resourceNamesFrom(process.env).deadLetterQueueUrl(name),
  bucket: (name) => resourceNamesFrom(process.env).bucket(name),
  key: (name) => resourceNamesFrom(process.env).key(name),
  pullQueuePrefix: () => resourceNamesFrom(process.env).pullQueuePrefix(),
};
