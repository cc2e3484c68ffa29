-- Risk rules: an access profile's modes by tool annotation, and who last changed the profile.

-- JSON object keyed by hint (destructiveHint, openWorldHint): { "mode": "approval" | "block", "whenMissing": "match" | "ignore" }.
-- Written only through the validated API; '{}' means no rule.
ALTER TABLE access_profiles ADD COLUMN risk_rules TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(risk_rules));
ALTER TABLE access_profiles ADD COLUMN updated_by TEXT;   -- actor id of the last PATCH; NULL until then
ALTER TABLE access_profiles ADD COLUMN updated_at TEXT;
