-- Upstream OAuth: a service whose URL answered 401 is an OAuth client of its authorization server.
-- Tokens live in the workspace Durable Object (upstream_grants); here is what the catalog needs to
-- decide a call and to start or refresh an authorization.

-- 'none': secret headers only; 'oauth': the gateway holds grants from the upstream's authorization server.
ALTER TABLE services ADD COLUMN authorization_kind TEXT NOT NULL DEFAULT 'none' CHECK (authorization_kind IN ('none', 'oauth'));
-- 'shared': one grant for the workspace; 'per_user': one per caller (the key's owner, or the OAuth-connected user).
ALTER TABLE services ADD COLUMN oauth_mode TEXT CHECK (oauth_mode IN ('shared', 'per_user'));
-- 'pending' until the first authorization completes (and again after invalid_grant or a disconnect).
ALTER TABLE services ADD COLUMN oauth_status TEXT CHECK (oauth_status IN ('pending', 'authorized'));
-- JSON { code, message, at }: why the service is pending, shown to admins; NULL when freshly connected.
ALTER TABLE services ADD COLUMN oauth_pending_reason TEXT;
-- JSON: resource, issuer, endpoints, scopes, registration method and client id (nothing secret).
ALTER TABLE services ADD COLUMN oauth_server TEXT;
-- AES-GCM envelope of the client secret (dynamic registration or pre-registered), never returned.
ALTER TABLE services ADD COLUMN oauth_client_secret TEXT;
-- The grant subject that indexes a per-user service (the admin who authorized it); 'workspace' when shared.
ALTER TABLE services ADD COLUMN oauth_index_subject TEXT;
-- Who completed the authorization that made the service callable, and when.
ALTER TABLE services ADD COLUMN oauth_authorized_by TEXT;
ALTER TABLE services ADD COLUMN oauth_authorized_at TEXT;
