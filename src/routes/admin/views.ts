// What the admin API answers (admin-api.md), as named components of the OpenAPI document. Secrets appear only in
// the answers that create, rotate or reveal them; every other answer shows `<name>_set` flags instead.
import { Type, type TSchema } from 'typebox';
import { AdminRun, JsonObject, noBody, nullable, ref } from '../../schemas/responses.ts';

const Id = Type.Integer({ minimum: 1 });
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const closed = (id: string, description: string) => ({ $id: id, additionalProperties: false, description });

export const Org = Type.Object({ id: Uuid, name: Type.String(), created_at: Timestamp }, closed('Org', 'An organization.'));

export const Membership = Type.Object(
  { org_id: Uuid, user_id: Uuid, role: Type.Enum(['admin', 'member']) },
  closed('Membership', 'A user’s membership of an organization.'),
);

export const User = Type.Object(
  { id: Uuid, email: Type.String(), name: nullable(Type.String()), platform_admin: Type.Boolean() },
  closed('User', 'A user.'),
);

export const Session = Type.Object(
  {
    user: Type.Object(
      { id: nullable(Uuid), email: nullable(Type.String()), name: nullable(Type.String()), platform_admin: Type.Boolean() },
      { additionalProperties: false, description: 'The signed-in user; all null but platform_admin for the admin token.' },
    ),
    memberships: Type.Array(
      Type.Object({ org_id: Uuid, org_name: Type.String(), role: Type.Enum(['admin', 'member']) }, { additionalProperties: false }),
    ),
    expires_at: nullable(Type.String({ format: 'date-time', description: 'When the session ends; null for a bearer token.' })),
    permissions: Type.Record(Type.String(), Type.Enum(['platform', 'org_admin', 'member']), {
      description:
        'What each admin operation (`METHOD /path` under /api/admin, as the API documents it) needs: `platform` a platform admin, `org_admin` an admin of the organization the resource belongs to, `member` any member of it. The API enforces the same table; an operation not listed needs a platform admin.',
    }),
  },
  closed('Session', 'Who is signed in (issue 14): the user, their organizations with the role in each, and the session’s end.'),
);

export const UserToken = Type.Object(
  { id: Uuid, token: Type.String({ description: 'Shown once: only its digest is kept.' }) },
  closed('UserToken', 'A personal sign-in token, shown this once.'),
);

export const Runtime = Type.Object(
  {
    id: Id,
    org_id: Uuid,
    name: Type.String(),
    kind: Type.Enum(['workflow', 'task']),
    base_url: Type.String(),
    api_key_set: Type.Boolean(),
    alert_secret_set: Type.Boolean(),
  },
  closed('Runtime', 'An n8n (`workflow`) or Trigger.dev (`task`) runtime of an organization.'),
);

const agentFields = {
  id: Id,
  org_id: Uuid,
  name: Type.String(),
  managed_by: Type.Enum(['platform', 'standalone']),
  status: Type.Enum(['active', 'paused', 'archived']),
  runtime_id: nullable(Id),
  target: nullable(Type.String()),
  allow_external_triggers: Type.Boolean(),
  allow_webhook_triggers: Type.Boolean(),
  output_kind: Type.Enum(['json', 'file_download']),
  running_timeout_ms: Type.Integer({ minimum: 1 }),
  poll_interval_s: Type.Integer({ minimum: 10, maximum: 3600 }),
  default_input: JsonObject,
  zone_app_url: nullable(Type.String()),
  ingest_api_key_set: Type.Boolean(),
  agent_api_key_set: Type.Boolean(),
  zone_jwt_secret_set: Type.Boolean(),
  webhook_token_set: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};
const webhookToken = Type.String({ description: 'The secret path segment of the webhook endpoints.' });

export const Agent = Type.Object(
  { ...agentFields, webhook_token: Type.Optional(webhookToken) },
  closed('Agent', 'An agent. `webhook_token` appears only in the answer of the update that first enables webhook triggers.'),
);

export const CreatedAgent = Type.Object(
  { ...agentFields, ingest_api_key: Type.String(), agent_api_key: Type.String(), zone_jwt_secret: Type.String(), webhook_token: Type.Optional(webhookToken) },
  closed('CreatedAgent', 'The new agent with its secrets, shown this once (`webhook_token` when webhook triggers start enabled).'),
);

export const RotatedKey = Type.Object(
  { kind: Type.Enum(['ingest', 'agent', 'webhook', 'zone']), value: Type.String() },
  closed('RotatedKey', 'The new secret; the old one stopped working.'),
);

export const WebhookTokenReveal = Type.Object({ webhook_token: webhookToken }, closed('WebhookTokenReveal', 'The agent’s webhook token (the reveal is audited).'));

const connectionType = Type.Enum(['api_key', 'basic_auth', 'oauth']);
const flag = (of: string) => Type.Optional(Type.Boolean({ description: `Whether a ${of} is stored.` }));

export const ConnectionCreated = Type.Object(
  { id: Uuid, integration_id: Type.String(), type: connectionType, active: Type.Boolean() },
  closed('ConnectionCreated', 'The new connection.'),
);

export const Connection = Type.Object(
  {
    id: Uuid,
    agent_id: Id,
    integration_id: Type.String(),
    type: connectionType,
    active: Type.Boolean(),
    extras: JsonObject,
    created_at: Timestamp,
    updated_at: Timestamp,
    // The fields of its type: plain ones as stored, secret ones as flags.
    value_set: flag('value'),
    username: Type.Optional(nullable(Type.String())),
    password_set: flag('password'),
    access_token_set: flag('access token'),
    refresh_token_set: flag('refresh token'),
    expires_at: Type.Optional(nullable(Timestamp)),
    token_url: Type.Optional(nullable(Type.String())),
    client_id: Type.Optional(nullable(Type.String())),
    client_secret_set: flag('client secret'),
    scope: Type.Optional(nullable(Type.String())),
  },
  closed('Connection', 'A third-party credential of an agent, without its secrets; the fields of its `type` only.'),
);

export const ConnectionList = Type.Object({ data: Type.Array(ref(Connection)) }, closed('ConnectionList', 'The agent’s connections.'));

const onState = Type.Enum(['completed', 'failed', 'cancelled', 'waiting']);

export const WebhookActionCreated = Type.Object(
  { id: Uuid, on_state: onState, url: Type.String(), signing_secret: Type.String({ description: 'Standard Webhooks secret, shown this once.' }) },
  closed('WebhookActionCreated', 'The new webhook action with its signing secret.'),
);

export const WebhookAction = Type.Object(
  { id: Uuid, agent_id: Id, on_state: onState, url: Type.String(), signing_secret_set: Type.Boolean(), created_at: Timestamp },
  closed('WebhookAction', 'Where run events of one status are POSTed.'),
);

export const WebhookActionList = Type.Object({ data: Type.Array(ref(WebhookAction)) }, closed('WebhookActionList', 'The agent’s webhook actions.'));

export const RunPage = Type.Object(
  { data: Type.Array(ref(AdminRun)), next_cursor: nullable(Type.String({ description: 'Pass as `cursor` for the next page.' })) },
  closed('RunPage', 'Runs, newest first.'),
);

export const RunLogs = Type.Object(
  {
    logs: Type.Array(
      Type.Object(
        {
          time: nullable(Timestamp),
          level: Type.String(),
          message: Type.String(),
          isError: Type.Boolean(),
          durationMs: nullable(Type.Number()),
          node: Type.Optional(Type.String({ description: 'n8n: the node name.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  closed('RunLogs', 'The run’s log, fetched from its runtime now (empty when the runtime never knew the run).'),
);

export const AuditPage = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        { id: Id, at: Timestamp, action: Type.String(), actor_user_id: nullable(Uuid), agent_id: nullable(Id), run_id: nullable(Id), details: JsonObject },
        { additionalProperties: false },
      ),
    ),
    next_cursor: nullable(Type.String()),
  },
  closed('AuditPage', 'Audit entries, newest first; `next_cursor` reads the next page (null on the last).'),
);

export const ADMIN_COMPONENTS: readonly TSchema[] = [
  Org, Membership, User, Session, UserToken, Runtime, Agent, CreatedAgent, RotatedKey, WebhookTokenReveal, ConnectionCreated, Connection,
  ConnectionList, WebhookActionCreated, WebhookAction, WebhookActionList, RunPage, RunLogs, AuditPage,
];

/** A removal's answer: 204, nothing in the body. */
export const NO_BODY = noBody('Removed; the body is empty.');
