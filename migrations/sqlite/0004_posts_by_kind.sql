-- Rollbacks and sealed choices are found by kind; without this, finding them reads the whole log.
CREATE INDEX posts_by_kind ON posts (campaign_id, kind, seq);
