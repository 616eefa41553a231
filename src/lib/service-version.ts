// The service's version, read from package.json rather than imported (src/ imports only src/: the architecture
// test). Two folders up from src/lib/ and dist/lib/ alike.
import { readFileSync } from 'node:fs';

export function serviceVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
