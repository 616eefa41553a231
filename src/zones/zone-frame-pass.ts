// Zone apps inside the console (issue 14). A zone answer is sandboxed into an opaque origin (routes/zone-proxy/
// response-headers.ts), so the browser never sends the session cookie on the app's own requests: its scripts,
// styles and form posts would all be refused. So the console's frame, opened at /zones/{agentId}/app/ with the
// cookie, is sent on to /zones/{agentId}/framed/{pass}/…, and every relative URL of the app keeps the pass.
// A pass names one session and one agent and is signed with the master key: it opens that zone app as that user
// and nothing else (not another zone, not the admin API), ends with the session (sign-out, expiry, a revoked
// token), and zone answers carry Referrer-Policy: no-referrer so it is not sent elsewhere.
import type { AppContext } from '../context.ts';
import { findLiveUserSessionById } from '../orgs/sessions-repo.ts';

const PURPOSE = 'zone-frame-pass';
const PASS = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

const message = (sessionId: string, agentId: number): string => `${sessionId}:${agentId}`;

export function framePass(ctx: AppContext, sessionId: string, agentId: number): string {
  return `${sessionId}.${ctx.secrets.sign(PURPOSE, message(sessionId, agentId))}`;
}

/** The user a pass signs in for this agent's zone app, while its session lives; null otherwise. */
export async function userOfFramePass(ctx: AppContext, pass: string, agentId: number): Promise<{ id: string } | null> {
  const m = PASS.exec(pass);
  if (!m || !ctx.secrets.verify(PURPOSE, message(m[1]!, agentId), m[2]!)) return null;
  const session = await findLiveUserSessionById(ctx.db, m[1]!, ctx.clock.now());
  return session?.user_id ? { id: session.user_id } : null;
}
