-- OAuth grants an admin revoked (issue 32). Revoking deletes the grant's tokens from Workers KV, but KV may serve
-- them from cache for 60 s or more, so /mcp also refuses every token of a grant listed here. A row is read under
-- the workspace's lease, and the revocation answers only once every isolate's lease on the state before it ran out.
-- It is kept until no token of the grant can still be valid (`forget_at`: a refresh served a stale grant record
-- writes the grant back, so that is its expiry), then the hourly job deletes it.
CREATE TABLE revoked_oauth_grants (
  workspace_id TEXT NOT NULL,
  grant_id     TEXT NOT NULL,    -- the OAuth library's grant id (the middle part of every token issued under it)
  revoked_at   TEXT NOT NULL,    -- ISO 8601, UTC
  forget_at    TEXT NOT NULL,    -- the grant's expiry (at least KV's propagation allowance away) + an access token's lifetime
  PRIMARY KEY (workspace_id, grant_id)
) WITHOUT ROWID;
CREATE INDEX revoked_oauth_grants_by_forget_at ON revoked_oauth_grants (forget_at);
