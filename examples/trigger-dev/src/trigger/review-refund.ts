// The Trigger.dev v4 task: the service triggers it with the agent's `target` as task id ("review-refund") and the
// task payload; ARS_AGENT_API_KEY and PAYMENTS_API_URL are set in the project's environment.
import { task, wait } from '@trigger.dev/sdk';
import type { TaskPayload } from '@agent-run-service/sdk';
import { reviewRefund, type Decision } from '../review-refund.js';

export const reviewRefundTask = task({
  id: 'review-refund',
  run: async (payload: TaskPayload) =>
    reviewRefund(payload, {
      createToken: (options) => wait.createToken(options),
      forToken: (tokenId) => wait.forToken<Decision>(tokenId).unwrap(),
      issueRefund: async (secret, refund) => {
        const res = await fetch(`${process.env.PAYMENTS_API_URL}/refunds`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': `refund-${refund.orderId}` },
          body: JSON.stringify(refund),
        });
        if (!res.ok) throw new Error(`payment provider answered ${res.status}`);
        return (await res.json()) as { id: string };
      },
    }),
});
