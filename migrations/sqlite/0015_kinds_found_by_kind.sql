-- The indexes by kind hold only the kinds looked up by kind: rollbacks, seals and deployments
-- among the posts, battles and turn beginnings among the outcomes. Every other post (a move, an
-- attack, a note) and every other outcome (a move made, casualties, a roll) entered an index it
-- is never looked up by: up to two more pages written at every commit, each on a page of its own
-- when the posts of a batch are spread over many campaigns. A query by kind repeats the index's
-- condition (`adjutant_store::POSTS_BY_KIND_HOLDS` and `OUTCOMES_BY_KIND_HOLDS`), and the
-- outcomes' index is in position order, the order they are read in.
DROP INDEX posts_by_kind;
CREATE INDEX posts_by_kind ON posts (campaign_id, kind, seq) WHERE kind IN ('rollback', 'seal', 'deploy');
DROP INDEX outcomes_by_kind;
CREATE INDEX outcomes_by_kind ON outcomes (campaign_id, kind, position) WHERE kind IN ('battle', 'turn_begins');
