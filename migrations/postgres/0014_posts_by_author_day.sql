-- A player's daily quotas count the player's posts since the day began, of one kind or of every
-- kind, inside the write transaction: one index on the author's posts by time serves both and
-- reads at most that day's posts, where the index by kind read every post of the author's when
-- no kind was given.
DROP INDEX posts_by_author;
CREATE INDEX posts_by_author_day ON posts (campaign_id, author_id, stamp);
