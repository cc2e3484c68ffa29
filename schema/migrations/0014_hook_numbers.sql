-- Versions and revisions are numbered per tool (v1, v2, … and r1, r2, …) so that people name them instead of
-- reading ids. A number is the tool's highest plus one, given in the insert itself; a reset removes every version
-- and revision, so numbering starts again at 1 after one. Existing rows are numbered in their order.
ALTER TABLE hook_versions ADD COLUMN number INTEGER;
UPDATE hook_versions SET number = (
  SELECT COUNT(*) FROM hook_versions v
  WHERE v.workspace_id = hook_versions.workspace_id AND v.tool_uid = hook_versions.tool_uid AND v.seq <= hook_versions.seq
);
CREATE UNIQUE INDEX hook_versions_number ON hook_versions (workspace_id, tool_uid, number);

ALTER TABLE hook_revisions ADD COLUMN number INTEGER;
UPDATE hook_revisions SET number = (
  SELECT COUNT(*) FROM hook_revisions r
  WHERE r.workspace_id = hook_revisions.workspace_id AND r.tool_uid = hook_revisions.tool_uid AND r.seq <= hook_revisions.seq
);
CREATE UNIQUE INDEX hook_revisions_number ON hook_revisions (workspace_id, tool_uid, number);
