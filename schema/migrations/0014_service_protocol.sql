-- Issue 29: the `server/discover` result of a service whose upstream speaks MCP 2026-07-28, found at indexing
-- (JSON); NULL for an upstream that speaks only the 2025-era revisions. Calls to it go out in that revision.
ALTER TABLE services ADD COLUMN discover TEXT;
