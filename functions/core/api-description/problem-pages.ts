/**
 * GET /problems/{type}: a page for each problem type of functions/core/http/problem-types.ts, in
 * Markdown, and the OpenAPI description of that route. What a developer reads when a `type` in an
 * answer is new to them.
 */
import type { HttpResponse } from '../http/messages.js';
import { problemTypes, isProblemSlug } from '../http/problem-types.js';
import { KoerierError, problems, problemType } from '../http/problems.js';

/** The page of the problem type `slug`; throws the 404 problem for a slug Koerier never answers with. */
export function problemTypePage(slug: string): HttpResponse {
  if (!isProblemSlug(slug))
    throw new KoerierError(problems.notFound(`Koerier has no problem type '${slug.slice(0, 64)}'.`));
  const { title, status, description } = problemTypes[slug];
  const body = [
    `# ${title}`,
    '',
    `Problem type \`${problemType(slug)}\` (resolved against the URL of the answer, it is this page), answered with HTTP ${status.join(' or ')}.`,
    '',
    description,
    '',
    'Koerier answers every error as RFC 9457 problem details (`application/problem+json`): branch on `type`, show `title` and `detail`; ' +
      '`errors`, where present, lists each violation with its requirement ID.',
    '',
  ].join('\n');
  return {
    status: 200,
    headers: { 'content-type': 'text/markdown; charset=utf-8', 'cache-control': 'public, max-age=3600' },
    body,
  };
}

export const problemPagePaths = {
  '/problems/{type}': {
    get: {
      operationId: 'getProblemType',
      summary: 'What a problem type means',
      description:
        'A page for each `type` Koerier answers errors with: its title, statuses, when it happens and what to do.',
      tags: ['API'],
      security: [],
      parameters: [
        {
          name: 'type',
          in: 'path',
          required: true,
          description: 'The last segment of the problem `type`.',
          schema: { type: 'string', enum: Object.keys(problemTypes) },
        },
      ],
      responses: {
        '200': { description: 'The page.', content: { 'text/markdown': { schema: { type: 'string' } } } },
        '404': {
          description: 'Koerier has no such problem type.',
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        },
      },
    },
  },
};
