/**
 * docs/RECEIVERS.md's test vectors (issue 30 item 6) cannot go stale: the document holds exactly
 * what Koerier's own sending code makes today (test/support/receiver-vectors.ts), and the receiver
 * kit gives every expected answer, in order, on one receiver set up as the vectors say.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createReceiver, staticToken, type Receiver } from '../../../receiver/src/index.js';
import { buildVectors, type VectorSet } from '../../support/receiver-vectors.js';

const DOC = new URL('../../../docs/RECEIVERS.md', import.meta.url);

async function codeBlockAfter(marker: string, language: string): Promise<string> {
  const doc = await readFile(DOC, 'utf8');
  const at = doc.indexOf(marker);
  expect(at, `docs/RECEIVERS.md has "${marker}"`).toBeGreaterThan(-1);
  return new RegExp(`\`\`\`${language}\\n([\\s\\S]+?)\\n\`\`\``).exec(doc.slice(at))![1]!;
}

const documented = async (): Promise<VectorSet> =>
  JSON.parse(await codeBlockAfter('<!-- vectors:', 'json')) as VectorSet;

describe('docs/RECEIVERS.md test vectors (issue 30 item 6)', () => {
  it("issue 30 item 6: the documented vectors are exactly the requests Koerier's delivery code makes and signs with the test key today", async () => {
    const built = await buildVectors();
    const doc = await documented();
    expect(doc.receiver).toEqual(built.receiver);
    for (const [index, vector] of built.vectors.entries()) expect(doc.vectors[index], vector.name).toEqual(vector);
    expect(doc.vectors).toHaveLength(built.vectors.length);
    expect(await codeBlockAfter('<!-- signature-base:', 'text')).toBe(built.structuredSignatureBase);
  });

  it('issue 30 item 6, WH-3, WH-4, EDU-IDEM-8, EDU-IDEM-15, RFC 9421: the receiver kit gives every vector its expected answer, in order', async () => {
    const { receiver: setup, vectors } = await documented();
    let handled: string[] = [];
    const receiver: Receiver = createReceiver({
      handshake: { origins: setup.origins, rate: setup.rate },
      token: staticToken(setup.token),
      signatures: { keys: setup.keys, maxAgeSeconds: setup.maxAgeSeconds },
      now: () => setup.now * 1000,
      onEvents(events) {
        handled.push(...events.map((event) => event.id));
      },
    });
    for (const vector of vectors) {
      handled = [];
      const answer = await receiver.handle(vector.request);
      expect(answer.status, vector.name).toBe(vector.expect.status);
      for (const [name, value] of Object.entries(vector.expect.headers ?? {}))
        expect(answer.headers[name], `${vector.name}: ${name}`).toBe(value);
      for (const name of vector.expect.absentHeaders ?? [])
        expect(answer.headers, `${vector.name}: no ${name}`).not.toHaveProperty(name);
      expect(handled, vector.name).toEqual(vector.expect.handled);
    }
  });
});
