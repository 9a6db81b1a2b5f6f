/**
 * Issue 14, item 6: the problem types are listed, and each has a page (GET /v1/problems/{type}).
 * That every slug Koerier answers with is in the catalogue is checked by the compiler: `problem()`
 * takes only the catalogue's slugs.
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { problemTypePage } from '../../../functions/core/api-description/problem-pages.js';
import { problemTypes } from '../../../functions/core/http/problem-types.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { refusalOf } from '../../support/refusals.js';

const slugs = Object.keys(problemTypes) as (keyof typeof problemTypes)[];

describe('problem type pages', () => {
  it('every problem type has a Markdown page naming its type URI, statuses and meaning', () => {
    expect(slugs.length).toBeGreaterThan(40);
    for (const slug of slugs) {
      const page = problemTypePage(slug);
      expect(page.status, slug).toBe(200);
      expect(page.headers['content-type']).toBe('text/markdown; charset=utf-8');
      const body = String(page.body);
      expect(body, slug).toContain(`# ${problemTypes[slug].title}`);
      expect(body, slug).toContain(problemTypeUri(slug));
      expect(body, slug).toContain(problemTypes[slug].description);
      for (const status of problemTypes[slug].status) expect(body, slug).toContain(String(status));
    }
  });

  it('a type Koerier never answers with is a 404 problem', () => {
    for (const slug of ['no-such-type', 'constructor', '__proto__', '']) {
      expect(refusalOf(() => problemTypePage(slug)).problem, slug).toMatchObject({
        status: 404,
        type: problemTypeUri('not-found'),
      });
    }
  });

  it('the API description lists every type: the enum of GET /problems/{type}, and of Problem.type', () => {
    const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
    const operation = (
      document.paths as Record<string, Record<string, { parameters: { name: string; schema: { enum: string[] } }[] }>>
    )['/problems/{type}']!['get']!;
    expect(operation.parameters.find((p) => p.name === 'type')!.schema.enum).toEqual(slugs);
    const problem = document.components.schemas.Problem as unknown as { properties: { type: { enum: string[] } } };
    expect(problem.properties.type.enum).toEqual(slugs.map((slug) => problemTypeUri(slug)));
  });
});
