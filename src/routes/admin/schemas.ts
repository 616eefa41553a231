// Schema pieces shared by the admin routes (admin-api.md). Bodies reject unknown top-level fields (the body guard
// names them); the free-form objects (default_input, extras) pass through untouched (house style 4).
import { Type } from 'typebox';
export { JsonObject, nullable } from '../../schemas/responses.ts';

export const NAME_MAX = 200;
export const URL_MAX = 2048;
export const TEXT_MAX = 1024;
/** Room for long OAuth tokens and JWT-shaped keys, but not for an abusive megabyte string. */
export const SECRET_MAX = 16_384;

export const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
export const Uuid = Type.String({ format: 'uuid' });
export const PositiveInt = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const strict = { additionalProperties: false } as const;

/** Path ids are read as strings and parsed by the route: anything malformed is an unknown id (404). */
export const IdParams = Type.Object({ id: Type.String() });

/** Query strings arrive as text (the app does not coerce types), so numbers are matched as digits. */
export const DigitsParam = Type.String({ pattern: '^[0-9]{1,15}$' });

/**
 * Issue 40 item 1: a list's `q`, a case-insensitive substring of the name (users: of the name or the email), taken
 * literally. As long as the longest thing it can match (an email, 320); no NUL, which PostgreSQL text cannot hold.
 */
export const SearchParam = Type.String({
  minLength: 1,
  maxLength: 320,
  pattern: '^[^\\u0000]*$',
  description: 'Case-insensitive substring of the name (users: of the name or the email), matched literally: % and _ are not wildcards.',
});

/** Issue 40 item 1: at most this many ids in one `ids` filter (a page of runs names at most PAGE_MAX agents). */
export const IDS_MAX = 200;
export const IdsParam = Type.String({
  pattern: `^[0-9]{1,15}(,[0-9]{1,15}){0,${IDS_MAX - 1}}$`,
  description: `Comma-separated ids, at most ${IDS_MAX}: only these (paged like the list: ask with a limit of at least their number).`,
});
