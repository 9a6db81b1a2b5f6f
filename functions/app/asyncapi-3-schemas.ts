/**
 * What the contract register's bundle gives @asyncapi/parser in place of @asyncapi/specs
 * (lib/bundling.ts aliases the package to this file): the JSON schemas of AsyncAPI 3.x alone.
 * The package holds every version since 2.0.0, each with and without `$id` — 1.16 MB of the
 * register's 3.3 MB bundle — where the register refuses any other version before the parser sees
 * the document (./contract-parsers.ts), and the parser reads only `schemas` (issue 15, item 4).
 *
 * The schemas are reached by a relative path: an alias of the package also captures its subpaths,
 * which would lead back here. Tests and the laptop run the package itself.
 */
import v300 from '../../node_modules/@asyncapi/specs/schemas/3.0.0.json' with { type: 'json' };
import v310 from '../../node_modules/@asyncapi/specs/schemas/3.1.0.json' with { type: 'json' };

// The parser reads both `require('@asyncapi/specs').schemas` and, through its default-import helper, `.default.schemas`.
export const schemas = { '3.0.0': v300, '3.1.0': v310 };
export default { schemas };
