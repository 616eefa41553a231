import type { FastifyRequest } from 'fastify';

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/** Path ids are numbers; anything else is treated like an unknown id. */
export function parseId(raw: unknown): number | null {
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,14}$/.test(raw)) return null;
  return Number(raw);
}
