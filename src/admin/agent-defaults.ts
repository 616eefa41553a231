// What a new agent gets for each setting its creator leaves out (admin-api.md "Agents"; spec 8.2). Plain values and
// no imports, so the console's agent form starts from these same values rather than a copy (issue 40 item 3: the
// form offered 3600 s while the API's default was 2 hours).
export const AGENT_DEFAULTS = {
  status: 'active',
  runtime_id: null,
  target: null,
  allow_external_triggers: false,
  allow_webhook_triggers: false,
  output_kind: 'json',
  running_timeout_ms: 7_200_000, // spec 8.2: 2 hours
  poll_interval_s: 60, // spec 8.2
  zone_app_url: null,
} as const;
