-- The log's witnesses outside the database.
-- * A campaign's chain starts from the hash of its creation record (`creation_record`);
--   campaigns created before start from 64 zeros (`legacy`).
-- * Each post keeps the server's signed receipt: the id of the Ed25519 key and the signature
--   (hex) over `adjutant-receipt-v1\n{campaign_id}\n{seq}\n{stamp}\n{hash}`. Posts written
--   before have none. The signing key itself is never in the database.
-- * A campaign's creation record never changes, campaigns are never deleted, and no table of
--   the log can be truncated (TRUNCATE runs no row triggers, so it has its own).
ALTER TABLE campaigns ADD COLUMN chain_genesis TEXT NOT NULL DEFAULT 'legacy'
    CHECK (chain_genesis IN ('legacy', 'creation_record'));
ALTER TABLE posts ADD COLUMN receipt_key_id TEXT;
ALTER TABLE posts ADD COLUMN receipt_signature TEXT;

CREATE FUNCTION refuse_campaign_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'campaigns are never deleted';
    END IF;
    RAISE EXCEPTION 'a campaign''s creation record never changes';
END;
$$;

CREATE TRIGGER campaigns_creation_record_immutable
    BEFORE UPDATE OF id, name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis
    ON campaigns FOR EACH ROW EXECUTE FUNCTION refuse_campaign_change();
CREATE TRIGGER campaigns_never_deleted BEFORE DELETE ON campaigns
    FOR EACH ROW EXECUTE FUNCTION refuse_campaign_change();

CREATE FUNCTION refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% cannot be truncated: the log is append-only', TG_TABLE_NAME;
END;
$$;

CREATE TRIGGER campaigns_no_truncate BEFORE TRUNCATE ON campaigns
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
CREATE TRIGGER posts_no_truncate BEFORE TRUNCATE ON posts
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
CREATE TRIGGER outcomes_no_truncate BEFORE TRUNCATE ON outcomes
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
CREATE TRIGGER snapshots_no_truncate BEFORE TRUNCATE ON snapshots
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
CREATE TRIGGER acknowledgements_no_truncate BEFORE TRUNCATE ON acknowledgements
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate();
