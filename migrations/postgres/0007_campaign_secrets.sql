-- The top secrets (s_K) of sealed-delay campaigns' hash chains, one row per chain. The API never
-- serves this table: a chain's secrets are revealed one at a time, in the outcomes of the posts
-- that use them, and only the chain's s_0 is published (in the campaign's settings, or in the
-- outcome of the previous chain's last draw). Rows are never changed or removed.
CREATE TABLE campaign_secrets (
    campaign_id UUID NOT NULL,
    chain       BIGINT NOT NULL CHECK (chain >= 0),
    secret      TEXT NOT NULL,
    PRIMARY KEY (campaign_id, chain)
);
CREATE TRIGGER campaign_secrets_append_only BEFORE UPDATE OR DELETE ON campaign_secrets
    FOR EACH ROW EXECUTE FUNCTION refuse_rewrite();

-- A sealed-delay post counts the campaign's earlier draws: its battle outcomes.
CREATE INDEX outcomes_by_kind ON outcomes (campaign_id, kind);
