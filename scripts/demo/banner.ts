// What the demo prints once everything is up: what runs where, what to open, the tokens to sign in with, the
// exports to paste and a few commands to try. The exports are also the content of .ars-demo/demo.env.
import type { DemoState } from './seed.ts';

export interface BannerFacts {
  base: string;
  adminToken: string;
  state: DemoState;
  n8nUrl: string;
  triggerUrl: string;
  zoneAppUrl: string;
  /** Pages of the service that answered (the console, /docs, /openapi.json), with what each is. */
  pages: Array<{ path: string; what: string }>;
  /** The demo folder and its exports file as the user should read them (relative to where they stand). */
  demoDir: string;
  envFile: string;
}

/** Shell lines, each one `export NAME=value` with a comment: pasting them is all the walk-through needs. */
export function exportLines(f: BannerFacts): string[] {
  const { agents: a, runs, user } = f.state;
  return [
    `export BASE=${f.base}`,
    `export ADMIN_TOKEN=${f.adminToken}   # platform admin: /api/admin/*`,
    `export USER_TOKEN=${user.token}   # ${user.email}'s personal sign-in token`,
    `export LEAD_AGENT=${a.lead.id} LEAD_KEY=${a.lead.ingestKey}   # n8n workflow answering JSON`,
    `export REPORT_AGENT=${a.report.id} REPORT_KEY=${a.report.ingestKey}   # n8n workflow answering a CSV file`,
    `export SUMMARY_AGENT=${a.summary.id} SUMMARY_KEY=${a.summary.ingestKey}   # Trigger.dev task, done at once`,
    `export REVIEW_AGENT=${a.review.id} REVIEW_KEY=${a.review.ingestKey}   # Trigger.dev task that waits for a human`,
    `export REVIEW_AGENT_KEY=${a.review.agentKey}   # its agent key: callback and waitpoint`,
    `export SYNC_AGENT=${a.sync.id} SYNC_KEY=${a.sync.ingestKey}   # standalone: reports runs it made elsewhere`,
    `export WAITING_RUN=${runs.waiting}   # the run waiting for review`,
  ];
}

export function banner(f: BannerFacts): string {
  const { runs, orgName, agents } = f.state;
  const open = f.pages.map((p) => `  ${f.base}${p.path}`.padEnd(44) + p.what);
  return [
    '',
    'Agent Run Service demo: running',
    '',
    `  service               ${f.base}   (PGlite data and its log: ${f.demoDir}/)`,
    `  n8n stand-in          ${f.n8nUrl}   workflows enrich-lead (JSON), export-leads (file)`,
    `  Trigger.dev stand-in  ${f.triggerUrl}   tasks summarize, review-draft (waits for a human)`,
    `  zone app              ${f.zoneAppUrl}   the lead enricher's app: in the console, Agents › Lead enricher › Open zone app`,
    '',
    `Seeded: organization "${orgName}", ${Object.keys(agents).length} agents, runs ${runs.completed.join(', ')} completed,`,
    `run ${runs.waiting} waiting for review, run ${runs.failed} failed.`,
    ...(open.length > 0 ? ['', 'Open:', ...open] : []),
    '',
    'Sign in with (shown here only; nothing is written outside the demo folder):',
    `  admin token   ${f.adminToken}`,
    `  user token    ${f.state.user.token}   (${f.state.user.email})`,
    '',
    `In another terminal, paste these (or: source ${f.envFile}):`,
    '',
    ...exportLines(f),
    '',
    'Then try:',
    '',
    '  # run the JSON workflow and wait for its answer: 200, completed',
    `  curl -s -X POST $BASE/api/agents/$LEAD_AGENT/runs/trigger-and-wait -H "Authorization: Bearer $LEAD_KEY" \\`,
    `    -H 'content-type: application/json' -d '{"input":{"company":"Initech"}}'; echo`,
    '  # the latest runs',
    `  curl -s "$BASE/api/admin/runs?limit=10" -H "Authorization: Bearer $ADMIN_TOKEN"; echo`,
    '  # approve the run waiting for review (200 {"ok":true}), then read it back: completed',
    `  curl -s -X POST $BASE/api/runs/$WAITING_RUN/waitpoint -H "Authorization: Bearer $REVIEW_AGENT_KEY" \\`,
    `    -H 'content-type: application/json' -d '{"payload":{"approved":true}}'; echo`,
    `  curl -s $BASE/api/admin/runs/$WAITING_RUN -H "Authorization: Bearer $ADMIN_TOKEN"; echo`,
    '',
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}
