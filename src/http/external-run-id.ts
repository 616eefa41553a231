// Spec 2.2 / 8.4: an external run id is 1–255 characters, and the service puts it in runtime paths as one segment
// (`/api/v3/runs/{id}`, `/api/v1/executions/{id}`). joinUrl percent-encodes every other character (`/`, `\`, `%`),
// but `.` and `..` cannot be encoded (URL parsers read `%2e` as a dot as well) and would climb out of the run's
// path (`GET /api/v3/runs/..` is `GET /api/v3/`): refused at the door, naming the field (issue 12).
import { errors } from '../errors.ts';
import { isUnsafeSegment } from '../runtimes/http.ts';

export function assertPathSafeExternalRunId(externalRunId: string, code: 'invalid_body' | 'validation_failed'): void {
  if (isUnsafeSegment(externalRunId)) {
    throw errors.invalid('body.externalRunId', 'must not be "." or ".." (it is a path segment at the runtime)', code);
  }
}
