/**
 * Reading a contract document's text by its media type (issue 14 item 2, EDU-21): the YAML guards
 * that the e2e test (test/e2e/contract-yaml.test.ts) cannot reach cheaply, and the line map.
 */
import { describe, expect, it } from 'vitest';
import { MAX_YAML_ALIASES, readDocumentText } from '../../../functions/app/contract-document-text.js';

describe('contract document text (issue 14 item 2)', () => {
  it('EDU-21: a large anchor repeated by fewer than the alias limit is still refused when it expands the document more than tenfold', () => {
    const blob = 'x'.repeat(200_000);
    const aliases = Array.from({ length: MAX_YAML_ALIASES - 10 }, (_, i) => `x-${i}: *big`).join('\n');
    const read = readDocumentText(`asyncapi: 3.0.0\nx-big: &big ${blob}\n${aliases}\n`, 'yaml');
    expect(read).toMatchObject({
      ok: false,
      errors: [{ message: expect.stringContaining('more than 10 times'), severity: 'error' }],
    });
  });

  it('EDU-21: past the alias limit a YAML document is refused, whatever its size', () => {
    const aliases = Array.from({ length: MAX_YAML_ALIASES + 1 }, (_, i) => `x-${i}: *a`).join('\n');
    const read = readDocumentText(`a: &a [1, 2]\n${aliases}\n`, 'yaml');
    expect(read).toMatchObject({ ok: false, errors: [{ message: expect.stringContaining('aliases expand too far') }] });
  });

  it('EDU-21: a finding at a JSON Pointer names the line of that node, or of the nearest node above it that exists', () => {
    const read = readDocumentText(
      ['asyncapi: 3.0.0', 'channels:', '  a/b:', '    messages:', '      - one', '      - two', ''].join('\n'),
      'yaml',
    );
    if (!read.ok) throw new Error('expected the document to be read');
    expect(read.value).toEqual({ asyncapi: '3.0.0', channels: { 'a/b': { messages: ['one', 'two'] } } });
    expect(read.lineOf('/channels/a~1b/messages/1')).toBe(6);
    expect(read.lineOf('/channels/a~1b/missing/deeper')).toBe(4);
    expect(read.lineOf(undefined)).toBeUndefined();
  });

  it('EDU-21: JSON media types take JSON only; YAML media types take JSON too (JSON is YAML)', () => {
    expect(readDocumentText('asyncapi: 3.0.0', 'json')).toMatchObject({
      ok: false,
      errors: [{ message: expect.stringContaining('not JSON') }],
    });
    expect(readDocumentText('{"asyncapi": "3.0.0"}', 'yaml')).toMatchObject({ ok: true, value: { asyncapi: '3.0.0' } });
  });
});
