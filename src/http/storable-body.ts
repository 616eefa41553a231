// Routes that store the JSON body they are sent refuse what PostgreSQL cannot store before anything is written,
// so bad input is a 4xx naming the field rather than a 500 at INSERT time (lib/storable-json.ts says what and why).
//
// Use as a route's preValidation hook (`preValidation: rejectUnstorableBody`); it answers with the route's
// validation code (400 invalid_body, or 422 where `config.validationCode` says so).
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import { findUnstorable } from '../lib/storable-json.ts';

/** preValidation hook: 4xx naming the field when the parsed body holds something the database cannot store. */
export async function rejectUnstorableBody(req: FastifyRequest): Promise<void> {
  const found = findUnstorable(req.body);
  if (found) throw new ApiError(req.routeOptions.config.validationCode ?? 'invalid_body', `${found.path} ${found.problem}`);
}
