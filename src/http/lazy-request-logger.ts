// Fastify gives every request a pino child logger bound to its request id. Making one costs about 10 µs (pino's
// child() with our serializers and redaction; bench CPU profile of /callback), and at the default level almost
// no request writes a line. This stands in for the child and makes it only when a line is actually written.
import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** The root logger, as Fastify's default pino instance is: it can say whether a level is on. */
type RootLogger = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: RootLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): FastifyBaseLogger['level'] {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: FastifyBaseLogger['level']) {
    this.real().level = level;
  }

  // Methods, not per-instance arrow functions: one small object per request is the whole cost.
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private write(level: Level, args: unknown[]): void {
    // A level switched off on the root (and not changed on this request) writes nothing: no child is made.
    if (this.#child === null && this.parent.isLevelEnabled?.(level) === false) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  private real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, made on first use. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}
