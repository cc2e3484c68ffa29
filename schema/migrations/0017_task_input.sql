-- Issue 29: a 2025-11-25 upstream's task may ask for input (its status `input_required`, the requests delivered on
-- `tasks/result`). For a 2026-07-28 requester the gateway holds that `tasks/result` open in one isolate for a while
-- and shows the requests on tasks/get; the requester answers with tasks/update. `input_token` names the relay
-- (CallRelayDO `mrtr:<token>`) the holder listens on, `input_until` when its hold ends (ISO 8601); `input_requests`
-- is the JSON map of the requests still waiting for an answer (key → {method, params}); `input_rounds` counts the
-- keys issued, so a key is never reused over the task's life. All NULL (and 0) while no input is held.
ALTER TABLE gateway_tasks ADD COLUMN input_token TEXT;
ALTER TABLE gateway_tasks ADD COLUMN input_until TEXT;
ALTER TABLE gateway_tasks ADD COLUMN input_requests TEXT;
ALTER TABLE gateway_tasks ADD COLUMN input_rounds INTEGER NOT NULL DEFAULT 0;
