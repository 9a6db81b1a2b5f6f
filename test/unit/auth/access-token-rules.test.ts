/**
 * The written forms of the access-token rules (settings KOERIER_SCOPE_CLAIMS and
 * KOERIER_ACCESS_TOKEN_TYPE, context `koerier:scopeClaims` and `koerier:accessTokenType`): what an
 * operator writes is read the same way by every loader, and a name Koerier does not know is
 * refused rather than half-read.
 */
import { describe, expect, it } from 'vitest';
import { accessTokenTypeOf, scopeClaimsOf } from '../../../functions/core/auth/access-token-rules.js';

describe('the scope claims as written (EDU-2)', () => {
  it('EDU-2: names are comma-separated with optional spaces, empty items ignored, duplicates once', () => {
    expect(scopeClaimsOf('roles')).toEqual(['roles']);
    expect(scopeClaimsOf(' scope , scp ')).toEqual(['scope', 'scp']);
    // A trailing comma or a doubled one (easy to leave in a context list) names nothing more.
    expect(scopeClaimsOf('scope,,scp,')).toEqual(['scope', 'scp']);
    expect(scopeClaimsOf('scp,scope,scp')).toEqual(['scp', 'scope']);
  });

  it('EDU-2: nothing named, or any unknown name among known ones, is refused (undefined) rather than partly taken', () => {
    for (const written of ['', ' ', ',', ' , '])
      expect(scopeClaimsOf(written), JSON.stringify(written)).toBeUndefined();
    // Reading only the known half would silently drop where the operator said the scopes are.
    expect(scopeClaimsOf('scope,groups')).toBeUndefined();
    expect(scopeClaimsOf('groups,roles')).toBeUndefined();
    expect(scopeClaimsOf('Scope')).toBeUndefined();
  });
});

describe('the access token type as written (EDU-4)', () => {
  it('EDU-4: at+jwt and JWT are matched case-insensitively and around spaces; anything else is unknown', () => {
    expect(accessTokenTypeOf('at+jwt')).toBe('at+jwt');
    expect(accessTokenTypeOf('AT+JWT')).toBe('at+jwt');
    expect(accessTokenTypeOf('jwt')).toBe('JWT');
    expect(accessTokenTypeOf(' JWT ')).toBe('JWT');
    expect(accessTokenTypeOf(' at+jwt\n')).toBe('at+jwt');
    expect(accessTokenTypeOf('id+jwt')).toBeUndefined();
    expect(accessTokenTypeOf('')).toBeUndefined();
  });
});
