-- The whole schema of the Agent Run Service. PostgreSQL dialect; runs on PGlite and on a real server.

CREATE TABLE organizations (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id              uuid PRIMARY KEY,
  email           text NOT NULL,
  name            text,
  platform_admin  boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('admin', 'member')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

-- Personal sign-in tokens (zones.md); only a digest is kept.
CREATE TABLE user_tokens (
  id            uuid PRIMARY KEY,
  user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name          text,
  token_digest  bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runtimes (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id            uuid NOT NULL REFERENCES organizations (id),
  name              text NOT NULL,
  kind              text NOT NULL,
  base_url          text NOT NULL,
  api_key_enc       text,
  alert_secret_enc  text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agents (
  id                       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id                   uuid NOT NULL REFERENCES organizations (id),
  name                     text NOT NULL,
  managed_by               text NOT NULL CHECK (managed_by IN ('platform', 'standalone')),
  status                   text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'archived')),
  runtime_id               bigint REFERENCES runtimes (id),
  target                   text,
  allow_external_triggers  boolean NOT NULL DEFAULT false,
  allow_webhook_triggers   boolean NOT NULL DEFAULT false,
  output_kind              text NOT NULL DEFAULT 'json' CHECK (output_kind IN ('json', 'file_download')),
  running_timeout_ms       bigint NOT NULL DEFAULT 7200000 CHECK (running_timeout_ms BETWEEN 1 AND 86400000),
  poll_interval_s          integer NOT NULL DEFAULT 60 CHECK (poll_interval_s BETWEEN 10 AND 3600),
  default_input            jsonb NOT NULL DEFAULT '{}',
  zone_app_url             text,
  -- Keys: a SHA-256 digest for lookup and constant-time comparison; shown in full only on create/rotate.
  ingest_key_digest        bytea NOT NULL UNIQUE,
  agent_key_digest         bytea NOT NULL UNIQUE,
  -- The agent key is also kept encrypted: it must be handed to the runtime's environment.
  agent_key_enc            text NOT NULL,
  webhook_token_digest     bytea UNIQUE,
  webhook_token_enc        text,
  zone_secret_enc          text NOT NULL,
  -- Credentials JWTs are signed with a per-agent secret, so rotating nothing else invalidates them.
  credentials_secret_enc   text NOT NULL,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_org_idx ON agents (org_id);

CREATE TABLE connections (
  id               uuid PRIMARY KEY,
  agent_id         bigint NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  integration_id   text NOT NULL,
  type             text NOT NULL CHECK (type IN ('api_key', 'basic_auth', 'oauth')),
  secret_enc       text NOT NULL, -- the type's secret fields as encrypted JSON
  extras           jsonb NOT NULL DEFAULT '{}',
  active           boolean NOT NULL DEFAULT true,
  token_expires_at timestamptz, -- oauth access token expiry, for refresh decisions
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
-- One active connection per integration: the connectionIds map is keyed by integration_id.
CREATE UNIQUE INDEX connections_active_integration_key ON connections (agent_id, integration_id) WHERE active;

CREATE TABLE runs (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id         bigint NOT NULL REFERENCES agents (id),
  status           text NOT NULL CHECK (status IN ('queued', 'running', 'waiting', 'completed', 'failed', 'cancelled')),
  source           text NOT NULL,
  external_run_id  text CHECK (char_length(external_run_id) BETWEEN 1 AND 255),
  input            jsonb NOT NULL DEFAULT '{}',
  metadata         jsonb NOT NULL DEFAULT '{}',
  output_data      jsonb,
  outputs          bigint NOT NULL DEFAULT 0 CHECK (outputs >= 0),
  error            jsonb,
  duration_ms      bigint,
  wait_state       jsonb, -- {tokenId, description, url, output} while waiting
  created_by       uuid REFERENCES users (id),
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  completed_at     timestamptz,
  next_poll_at     timestamptz,
  poll_lease_until timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT runs_agent_external_key UNIQUE (agent_id, external_run_id)
);
CREATE INDEX runs_agent_idx ON runs (agent_id, id DESC);
CREATE INDEX runs_status_idx ON runs (status, id DESC);
CREATE INDEX runs_active_created_idx ON runs (created_at) WHERE status IN ('queued', 'running', 'waiting');
CREATE INDEX runs_due_poll_idx ON runs (next_poll_at) WHERE next_poll_at IS NOT NULL;

CREATE TABLE webhook_actions (
  id                  uuid PRIMARY KEY,
  agent_id            bigint NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  on_state            text NOT NULL CHECK (on_state IN ('completed', 'failed', 'cancelled', 'waiting')),
  url                 text NOT NULL,
  signing_secret_enc  text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_actions_agent_idx ON webhook_actions (agent_id, on_state);

-- Durable outbox for outbound deliveries (webhook actions): at-least-once with retries.
CREATE TABLE outbox (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_action_id  uuid REFERENCES webhook_actions (id) ON DELETE CASCADE,
  run_id             bigint REFERENCES runs (id),
  event              text NOT NULL,
  message_id         text NOT NULL UNIQUE, -- the webhook-id receivers dedupe on; stable across retries
  snapshot           jsonb NOT NULL, -- the run row as it was when the event happened
  attempts           integer NOT NULL DEFAULT 0,
  next_attempt_at    timestamptz NOT NULL DEFAULT now(),
  locked_until       timestamptz,
  delivered_at       timestamptz,
  failed_at          timestamptz, -- gave up
  last_error         text,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;

CREATE TABLE audit_log (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at             timestamptz NOT NULL DEFAULT now(),
  action         text NOT NULL,
  actor_user_id  uuid,
  agent_id       bigint,
  run_id         bigint,
  details        jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_agent_idx ON audit_log (agent_id, id DESC);
CREATE INDEX audit_action_idx ON audit_log (action, id DESC);

-- Fixed one-minute buckets (spec 8.1), shared by every instance.
CREATE TABLE rate_limit_buckets (
  key           text NOT NULL,
  window_start  timestamptz NOT NULL,
  count         integer NOT NULL,
  PRIMARY KEY (key, window_start)
);

-- Runtime failure alerts are delivered at least once: remember ids to drop repeats.
CREATE TABLE alert_receipts (
  runtime_id   bigint NOT NULL REFERENCES runtimes (id) ON DELETE CASCADE,
  alert_id     text NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (runtime_id, alert_id)
);
