// Path ids: numbers for agents, runtimes and runs, uuids for the rest (admin-api.md). Malformed is unknown: 404.
import { errors } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';

export function numericId(raw: string, what: string): number {
  const id = parseId(raw);
  if (id === null) throw errors.notFound(what);
  return id;
}

/** A query-string number within bounds, else 400 naming the parameter. */
export function queryInt(raw: string | undefined, name: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^[0-9]{1,15}$/.test(raw) || n < min || n > max) throw errors.invalid(`querystring.${name}`, `must be an integer from ${min} to ${max}`);
  return n;
}

/** An `ids` list the schema has matched (IdsParam: digits, commas, at most IDS_MAX), as numbers without repeats. */
export function queryIds(raw: string | undefined): number[] | undefined {
  return raw === undefined ? undefined : [...new Set(raw.split(',').map(Number))];
}
