-- A post's outcomes are found by their positions, not by an index of their own. Each post records
-- `outcomes_through`: the campaign's last outcome position once its own outcomes are written (the
-- one before it when it has none; 0 before the campaign's first outcome). A post's outcomes are
-- then the positions after the post before it's and through its own, and a range of posts' the
-- positions after the first one before the range's and through its last's: a range of the
-- outcomes' (campaign_id, position) index, which every outcome is in already. The index by post
-- cost every outcome a page of its own written at its commit when a batch's posts are spread
-- over many campaigns.
ALTER TABLE posts ADD COLUMN outcomes_through INTEGER NOT NULL DEFAULT 0;
-- The posts stored before: each post's through is the last position of the latest post at or
-- before it that has outcomes, two seeks on the index by post before it goes.
DROP TRIGGER posts_append_only_update;
UPDATE posts SET outcomes_through = COALESCE((
    SELECT MAX(o.position) FROM outcomes o INDEXED BY outcomes_by_post
    WHERE o.campaign_id = posts.campaign_id AND o.seq = (
        SELECT MAX(l.seq) FROM outcomes l INDEXED BY outcomes_by_post
        WHERE l.campaign_id = posts.campaign_id AND l.seq <= posts.seq)), 0);
CREATE TRIGGER posts_append_only_update BEFORE UPDATE ON posts
BEGIN SELECT RAISE(ABORT, 'posts are append-only'); END;
DROP INDEX outcomes_by_post;
