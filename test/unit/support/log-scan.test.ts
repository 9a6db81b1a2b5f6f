/**
 * The log scan of the whole suite (test/support/log-scan.ts) finds what it is there to find, and
 * the logger's redaction (functions/app/logger.ts) leaves it nothing to find in what the code logs.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, logger } from '../../../functions/app/logger.js';
import { findLeaks } from '../../support/log-scan.js';

const SECRET = 'tHe-TeSt-SeCrEt-4711';

function linesOf(write: () => void): string[] {
  const lines: string[] = [];
  const restore = logger.captureTo((line) => lines.push(line), 'info');
  try {
    write();
  } finally {
    restore();
  }
  return lines;
}

describe('the log scan', () => {
  it('CE-16: finds a planted test secret, a token, a private key and event data, and passes clean lines', () => {
    const clean = JSON.stringify({
      level: 'info',
      message: 'event accepted',
      source: 'urn:x',
      id: '1',
      type: 't',
      data: '[redacted]',
    });
    const leaks = findLeaks(
      [
        clean,
        JSON.stringify({ message: 'oops', detail: `the secret is ${SECRET}` }),
        JSON.stringify({ message: 'oops', header: 'Bearer abcdefghijklmnopqrstuvwxyz012345' }),
        JSON.stringify({ message: 'oops', jwt: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4eXp6eSJ9.c2lnbmF0dXJlLWJ5dGVz' }),
        JSON.stringify({ message: 'oops', pem: '-----BEGIN PRIVATE KEY-----\nMII' }),
        JSON.stringify({ message: 'oops', nested: [{ data: { name: 'Jan' } }] }),
        JSON.stringify({ message: 'oops', body: JSON.stringify({ specversion: '1.0', data_base64: 'AAAA' }) }),
      ],
      [SECRET],
    );
    expect(leaks.map((leak) => [leak.line, leak.what])).toEqual([
      [2, 'a test secret (tHe…)'],
      [3, 'a bearer credential'],
      [4, 'a JWT (access token)'],
      [5, 'a private key'],
      [6, 'a field "data" with a value'],
      [7, "an event's data inside a string"],
    ]);
  });

  it('EDU-26: the logger redacts secret-named fields and event data at any depth, so what the code logs passes the scan', () => {
    const lines = linesOf(() =>
      createLogger('info').info('delivery attempted', {
        subscriptionId: 's-1',
        authorization: `Bearer ${SECRET}`,
        sinkCredential: { clientSecret: SECRET },
        attempts: [{ token: SECRET, data: { name: 'Jan' } }],
        event: { id: '1', data: 'personal', data_base64: 'AAAA' },
      }),
    );
    expect(lines).toHaveLength(1);
    expect(findLeaks(lines, [SECRET])).toEqual([]);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'info',
      message: 'delivery attempted',
      service: 'koerier',
      subscriptionId: 's-1',
    });
  });
});
