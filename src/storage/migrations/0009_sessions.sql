-- Console sessions (issue 14; decisions.md "Sessions and roles"). Signing in with a token makes a session: the
-- cookie carries a random secret of its own, never the token, so a session can end (sign-out, expiry, revocation)
-- without touching the token. Only the secret's SHA-256 digest is kept.
--
-- Who the session speaks for: a user who signed in with a personal token (user_token_id: revoking that token ends
-- its sessions, by the cascade), or the platform-admin token (user_id NULL; admin_token_digest must still match
-- the configured token, so changing ARS_ADMIN_TOKEN ends those sessions).
CREATE TABLE sessions (
  id                  uuid PRIMARY KEY,
  secret_digest       bytea NOT NULL UNIQUE,
  user_id             uuid REFERENCES users (id) ON DELETE CASCADE,
  user_token_id       uuid REFERENCES user_tokens (id) ON DELETE CASCADE,
  admin_token_digest  bytea,
  created_at          timestamptz NOT NULL,
  expires_at          timestamptz NOT NULL,
  CHECK ((user_id IS NOT NULL AND user_token_id IS NOT NULL AND admin_token_digest IS NULL)
      OR (user_id IS NULL AND user_token_id IS NULL AND admin_token_digest IS NOT NULL))
);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);
CREATE INDEX sessions_user_token_idx ON sessions (user_token_id);
