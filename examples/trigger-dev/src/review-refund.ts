// The refund review, written against the Agent Run Service SDK and two waitpoint functions, so that it runs inside
// Trigger.dev (src/trigger/review-refund.ts passes `wait.createToken`/`wait.forToken`) and in a test against the
// Trigger.dev fake alike.
import { TaskClient, type ResolvedCredential, type TaskClientOptions, type TaskPayload } from '@agent-run-service/sdk';

export interface RefundInput {
  orderId: string;
  amount: number;
  reason?: string;
}

/** What the reviewer sends through the service's /waitpoint as `payload`. */
export interface Decision {
  approved: boolean;
  reviewer?: string;
  note?: string;
}

export interface RefundResult {
  orderId: string;
  amount: number;
  approved: boolean;
  reviewer: string | null;
  refundId: string | null;
  outputs: number;
}

export interface ReviewDeps {
  createToken(options: { tags: string[]; timeout: string }): Promise<{ id: string }>;
  forToken(tokenId: string): Promise<Decision>;
  /** Calls the payment provider with the resolved secret. */
  issueRefund(secret: string, refund: { orderId: string; amount: number }): Promise<{ id: string }>;
}

/** The integration id of the payment provider's connection on the agent (admin API: connections). */
export const PAYMENTS = 'payments';

export async function reviewRefund(payload: TaskPayload, deps: ReviewDeps, opts: TaskClientOptions = {}): Promise<RefundResult> {
  const ars = TaskClient.fromPayload(payload, opts);
  const input = payload.input as unknown as RefundInput;
  try {
    // Resolved first: the credentials token lives 60 minutes from the trigger, a review may take a day (spec 5).
    const secret = secretOf(await ars.credential(PAYMENTS));
    await ars.started();

    // The tag lets the service check that the token it completes is this run's.
    const token = await deps.createToken({ tags: [ars.waitpointTag()], timeout: '1d' });
    await ars.waiting({
      tokenId: token.id,
      description: `Refund ${input.amount} on order ${input.orderId}${input.reason ? ` (${input.reason})` : ''}?`,
      output: { orderId: input.orderId, amount: input.amount, reason: input.reason ?? null },
    });
    const decision = await deps.forToken(token.id);

    const refund = decision.approved ? await deps.issueRefund(secret, { orderId: input.orderId, amount: input.amount }) : null;
    const result: RefundResult = {
      orderId: input.orderId,
      amount: input.amount,
      approved: decision.approved,
      reviewer: decision.reviewer ?? null,
      refundId: refund?.id ?? null,
      outputs: refund ? 1 : 0,
    };
    // Reported at once; the return value also becomes the run's output when the service polls (either wins first).
    await ars.complete({ ...result }, { outputs: result.outputs });
    return result;
  } catch (err) {
    await ars.fail(err instanceof Error ? err : String(err)).catch(() => undefined);
    throw err;
  }
}

function secretOf(credential: ResolvedCredential): string {
  switch (credential.type) {
    case 'api_key':
      return credential.value;
    case 'oauth':
      return credential.access_token;
    case 'basic_auth':
      return `${credential.username}:${credential.password}`;
  }
}
