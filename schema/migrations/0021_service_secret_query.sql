-- A service URL's query string is a secret, like its secret headers: hosted MCP servers commonly take their key in
-- the URL (`?api_key=…`). From now on the `url` column holds the URL without its query, `secret_query` the query
-- sealed (AES-GCM under SECRETS_KEY, bound to `<service id>:query`), and `secret_query_names` the parameter names,
-- the only part ever returned. A row from before keeps its query in `url` until the service's next change seals it;
-- the API already returns it without the query.
ALTER TABLE services ADD COLUMN secret_query TEXT;
ALTER TABLE services ADD COLUMN secret_query_names TEXT;
