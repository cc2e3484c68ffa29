-- Issue 26, finding 9: whether the tools of a service's first indexing start in changed-definition review (1) or
-- active (0). Tools a later refresh adds always start in review.
ALTER TABLE services ADD COLUMN review_initial_tools INTEGER NOT NULL DEFAULT 0;
