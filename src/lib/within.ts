// A bounded wait on a promise whose work cannot itself be cancelled (a query): past the limit the caller goes on
// without it, and the work's late result or failure is dropped.

export class TookTooLong extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/**
 * Whether `work` settled within `ms` (its value or failure is not wanted: a shutdown step, a pool closing). Never
 * rejects; past the limit the caller goes on.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  return within(work, Math.max(0, ms)).then(() => true, (err: unknown) => !(err instanceof TookTooLong));
}

/** `work`'s value; rejects with work's own error, or with TookTooLong once `ms` have passed. */
export async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TookTooLong(ms)), ms)));
  work.catch(() => {}); // a failure after the limit has nobody left to tell
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
