-- Revocable tokens: a principal whose token was revoked authenticates no more (the row stays:
-- its posts name it). Rotating a token replaces token_hash in place.
ALTER TABLE principals ADD COLUMN revoked_at TIMESTAMPTZ;

-- Per-player daily quotas count a player's posts of one kind since a time.
CREATE INDEX posts_by_author ON posts (campaign_id, author_id, kind, stamp);
