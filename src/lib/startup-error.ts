/**
 * An expected reason the service cannot start (a port in use, a data folder another process holds, a database that
 * refuses the credentials or stays unreachable): server.ts prints its message as one line, without a stack, and
 * exits with `exitCode` — 2 when the setting it names must change, 1 when waiting or a restart may be enough.
 */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
  }
}
