-- A workspace keeps at least one admin member once it has one. Removing a member revokes their credentials first and
-- ends the membership last (so a removal that failed part-way can be retried), which left a gap: two admins removing
-- each other at once both found another admin, and both went ahead. A removal now starts by claiming the membership
-- (`removal_started_at`) in one conditional statement that also requires another admin who is not being removed;
-- an admin being removed no longer counts as one, for a removal or for a change of role.
ALTER TABLE memberships ADD COLUMN removal_started_at TEXT; -- ISO 8601, UTC; NULL while no removal has started
