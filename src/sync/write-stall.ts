// A client that stops reading a streamed answer: its socket's buffer fills, the response stops draining, the
// stream pauses — and so does the runtime's answer behind it, whose idle timer does not count paused time. Left
// alone, the connection, the upstream socket and the workflow execution stay held until the run's running
// timeout. This notices: the response has wanted a drain (its buffer is full) and none came for `stallMs`.
import type { ServerResponse } from 'node:http';

export interface WriteStallWatch {
  stop(): void;
}

/** Calls `onStall` once when `res` has not drained for `stallMs` while it had data waiting; never otherwise. */
export function watchWriteStall(res: ServerResponse, stallMs: number, onStall: () => void): WriteStallWatch {
  // One timer per response, pushed back by every drain; when it fires with nothing waiting (the runtime is slow,
  // not the client), it simply re-arms.
  const timer = setTimeout(function check() {
    if (res.writableNeedDrain) onStall();
    else timer.refresh();
  }, stallMs);
  const drained = (): void => void timer.refresh();
  res.on('drain', drained);
  return {
    stop() {
      clearTimeout(timer);
      res.off('drain', drained);
    },
  };
}
