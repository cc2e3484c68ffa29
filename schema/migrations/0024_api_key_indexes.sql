-- Revoked keys are kept (records name them), so a workspace's rows only grow as keys are rotated. The reads that run
-- often go by index instead of over every key the workspace ever had: a key's creation counts the unrevoked ones, a
-- key list reads the unrevoked ones and the newest revocations, and revoking a key follows the keys made with it.
CREATE INDEX api_keys_by_revocation ON api_keys (workspace_id, revoked_at);
CREATE INDEX api_keys_by_maker ON api_keys (workspace_id, created_by);
