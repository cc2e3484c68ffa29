-- Captured call-log detail bytes per workspace and hour: the rolling allowance (README Limits) sums the last 24 hours.
-- Written in the same D1 batch as the rows it counts; the hourly cron deletes hours past the window.

CREATE TABLE log_detail_usage (
  workspace_id TEXT NOT NULL,
  hour         INTEGER NOT NULL,   -- Unix time / 3,600,000, floored
  bytes        INTEGER NOT NULL,   -- UTF-8 bytes of the details JSON stored in that hour
  PRIMARY KEY (workspace_id, hour)
) WITHOUT ROWID;
