-- The log's witnesses outside the database.
-- * A campaign's chain starts from the hash of its creation record (`creation_record`);
--   campaigns created before start from 64 zeros (`legacy`).
-- * Each post keeps the server's signed receipt: the id of the Ed25519 key and the signature
--   (hex) over `adjutant-receipt-v1\n{campaign_id}\n{seq}\n{stamp}\n{hash}`. Posts written
--   before have none. The signing key itself is never in the database.
-- * A campaign's creation record never changes, and campaigns are never deleted. (SQLite has
--   no TRUNCATE: its `DELETE FROM t` without WHERE runs the row triggers that refuse it.)
ALTER TABLE campaigns ADD COLUMN chain_genesis TEXT NOT NULL DEFAULT 'legacy'
    CHECK (chain_genesis IN ('legacy', 'creation_record'));
ALTER TABLE posts ADD COLUMN receipt_key_id TEXT;
ALTER TABLE posts ADD COLUMN receipt_signature TEXT;

CREATE TRIGGER campaigns_creation_record_immutable
BEFORE UPDATE OF id, name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis
ON campaigns
BEGIN SELECT RAISE(ABORT, 'a campaign''s creation record never changes'); END;
CREATE TRIGGER campaigns_never_deleted BEFORE DELETE ON campaigns
BEGIN SELECT RAISE(ABORT, 'campaigns are never deleted'); END;
