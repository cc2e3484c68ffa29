-- Who made the call a log row belongs to (issue 13): `key:<key id>` for an API key, `oauth:<client_id>` for an
-- OAuth access token. NULL on rows written before this column existed.
ALTER TABLE call_logs ADD COLUMN actor TEXT;
ALTER TABLE content_logs ADD COLUMN actor TEXT;
