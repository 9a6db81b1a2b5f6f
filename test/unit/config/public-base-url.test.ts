/** Issue 31, item 1: KOERIER_PUBLIC_BASE_URL, the base of every link, read once and checked at start-up. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../functions/config.js';
import { publicRootOf } from '../../../functions/config/public-base-url.js';

const base = {
  KOERIER_ISSUER: 'https://issuer.example',
  KOERIER_AUDIENCE: 'koerier',
  KOERIER_JWKS_URL: 'https://issuer.example/jwks',
  KOERIER_WEBHOOK_ORIGIN: 'koerier.example.org',
};
const read = (value: string | undefined) =>
  loadConfig(value === undefined ? base : { ...base, KOERIER_PUBLIC_BASE_URL: value });

describe('issue 31 item 1: KOERIER_PUBLIC_BASE_URL', () => {
  it('LIVE-1, issue 31 item 1: the API URL is kept, an origin alone is read as the API under /v1, and operational events take it as their source', () => {
    expect(read('https://koerier.example.org/v1').publicBaseUrl).toBe('https://koerier.example.org/v1');
    expect(read('https://koerier.example.org/v1/').publicBaseUrl).toBe('https://koerier.example.org/v1');
    expect(read('https://koerier.example.org').publicBaseUrl).toBe('https://koerier.example.org/v1');
    expect(read('https://koerier.example.org/').operationsSource).toBe('https://koerier.example.org/v1');
    // Behind a reverse proxy under a path of its own.
    expect(read('https://gateway.example.org/koerier/v1').publicBaseUrl).toBe('https://gateway.example.org/koerier/v1');
    expect(read('http://127.0.0.1:3000/v1').publicBaseUrl).toBe('http://127.0.0.1:3000/v1');
    expect(read(undefined).publicBaseUrl).toBe('');
    expect(read(undefined).operationsSource).toBe('urn:koerier:koerier.example.org');
  });

  it('LIVE-1, issue 31 item 1: a value links could not be built on stops the start, naming the setting', () => {
    for (const wrong of [
      'koerier.example.org',
      'ftp://koerier.example.org/v1',
      'https://koerier.example.org/v1?x=1',
      'https://user:pw@koerier.example.org/v1',
      'https://koerier.example.org/api',
    ])
      expect(() => read(wrong), wrong).toThrow(
        /KOERIER_PUBLIC_BASE_URL must be .*e\.g\. https:\/\/koerier\.example\.org\/v1/,
      );
  });

  it("LIVE-1, issue 31 item 1: the laptop host's own resources sit at the public base URL's root", () => {
    expect(publicRootOf('https://koerier.example.org')).toBe('https://koerier.example.org');
    expect(publicRootOf('https://gateway.example.org/koerier/v1')).toBe('https://gateway.example.org/koerier');
    expect(publicRootOf(undefined)).toBeUndefined();
    expect(publicRootOf('not a url')).toBeUndefined();
  });
});
