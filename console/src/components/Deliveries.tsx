// A run's outbound webhook deliveries: attempts, last error, and "Redeliver".
import { api, EMPTY, unwrap } from '../api/client.ts';
import { useLoad } from '../lib/useLoad.ts';
import { ErrorLine, Loaded, Time, useAction } from './ui.tsx';

/** `canRedeliver`: the user's role allows it (issue 40 item 2: otherwise the button is not there). */
export function Deliveries({ runId, canRedeliver }: { runId: string; canRedeliver: boolean }) {
  const list = useLoad(() => unwrap(api.GET('/api/admin/runs/{runId}/deliveries', { params: { path: { runId: Number(runId) } } })), [runId]);
  const action = useAction();
  const redeliver = (deliveryId: number) =>
    void action.run(() => unwrap(api.POST('/api/admin/runs/{runId}/deliveries/{deliveryId}/redeliver', { params: { path: { runId: Number(runId), deliveryId } }, body: EMPTY })).then(list.reload));
  return (
    <section aria-labelledby={`deliveries-${runId}`}>
      <h2 id={`deliveries-${runId}`}>Outbound deliveries</h2>
      <ErrorLine error={action.error} />
      <Loaded load={list} isEmpty={(d) => d.data.length === 0} empty="No webhook actions fired for this run.">
        {(d) => (
          <div className="table-wrap">
            <table>
              <thead><tr><th scope="col">Event</th><th scope="col">Attempts</th><th scope="col">State</th><th scope="col">Last error</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
              <tbody>
                {d.data.map((x) => (
                  <tr key={x.id}>
                    <td>{x.event}</td>
                    <td>{x.attempts}</td>
                    <td>{x.delivered_at ? <>delivered <Time iso={x.delivered_at} /></> : x.failed_at ? <>gave up <Time iso={x.failed_at} /></> : <>next try <Time iso={x.next_attempt_at} /></>}</td>
                    <td className="wrap">{x.last_error ?? '—'}</td>
                    <td>{canRedeliver && <button type="button" disabled={action.busy} onClick={() => redeliver(x.id)} aria-label={`Redeliver ${x.event} delivery ${x.id}`}>Redeliver</button>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </section>
  );
}
