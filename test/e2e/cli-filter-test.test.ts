/**
 * `koerier filter test` (issue 32 item 7): the real binary says which events a filter matches,
 * with no gateway (the URL below answers nothing), and refuses an invalid filter as a usage error
 * naming the position and what was expected.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliUser, type CliUser } from '../support/koerier-cli.js';

vi.setConfig({ testTimeout: 60_000 });

let cli: CliUser;
let events: string;
beforeAll(async () => {
  cli = await cliUser('http://127.0.0.1:9/v1');
  events = join(cli.cwd, 'events.jsonl');
  const event = (id: string, type: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ specversion: '1.0', id, source: 'urn:nld:oin:1:systeem:x', type, ...extra, data: {} });
  await writeFile(
    events,
    [
      event('a', 'nl.edu.leerling.ingeschreven.v1', { schoolcode: '12AB' }),
      event('b', 'nl.edu.leerling.ingeschreven.v1'),
      event('c', 'nl.overheid.zaken.zaak.aangemaakt.v1', { schoolcode: '12AB' }),
    ].join('\n'),
  );
});
afterAll(async () => {
  await cli?.remove();
});

describe('CESQL-7, issue 32 item 7: koerier filter test', () => {
  it('CESQL-7, issue 32 item 7: says which events an sql filter, or a list of filters, matches, without a gateway', async () => {
    const sql = await cli.run([
      '--json',
      'filter',
      'test',
      '--sql',
      "type LIKE 'nl.edu.%' AND schoolcode = '12AB'",
      events,
    ]);
    expect(sql.code).toBe(0);
    const matched = (JSON.parse(sql.stdout) as { events: { id: string; matches: boolean }[] }).events;
    expect(matched.map((e) => [e.id, e.matches])).toEqual([
      ['a', true],
      ['b', false],
      ['c', false],
    ]);
    const list = await cli.run([
      'filter',
      'test',
      '--filter',
      '[{"exact":{"schoolcode":"12AB"}},{"sql":"NOT (type LIKE \'nl.edu.%\')"}]',
      events,
    ]);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain('1 of 3 events match');
  });

  it('CESQL-7, issue 32 item 7: an invalid expression is a usage error naming the position and what was expected', async () => {
    const refused = await cli.run(['filter', 'test', '--sql', "type = 'a' OR type = 'b' AND x", events]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'filters[0].sql: "sql" is not a CESQL v1 expression at position 26: expected OR or parentheses',
    );
  });
});
