-- Code Mode (issue 16).

-- How a profile's clients discover tools on /mcp: 'direct' (each tool is an MCP tool), 'code' (only describe_tools and
-- run_code), or 'both'.
ALTER TABLE access_profiles ADD COLUMN discovery TEXT NOT NULL DEFAULT 'direct' CHECK (discovery IN ('direct', 'code', 'both'));

-- A row of a Code Mode inner call: its 0-based index in the run (the row's request_id is the run's). NULL on direct calls.
ALTER TABLE call_logs ADD COLUMN call_index INTEGER;
