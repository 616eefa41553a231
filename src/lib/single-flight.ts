// One promise per key at a time: concurrent callers for a key share the call already in flight. Per instance
// (a context member), never module-level.
export class SingleFlight<K, V> {
  readonly #inFlight = new Map<K, Promise<V>>();

  /** The call in flight for `key`, or a new one made by `start` (forgotten once it settles). */
  run(key: K, start: () => Promise<V>): Promise<V> {
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const started = start().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, started);
    return started;
  }
}
