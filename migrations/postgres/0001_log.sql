-- Adjutant's log on PostgreSQL. Posts, outcomes and snapshots are append-only: a trigger
-- refuses UPDATE and DELETE on them.

CREATE TABLE principals (
    id          UUID PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('moderator', 'player', 'bot')),
    name        TEXT NOT NULL,
    token_hash  BYTEA NOT NULL UNIQUE,
    campaign_id UUID,
    side        TEXT,
    created_by  UUID REFERENCES principals (id),
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE campaigns (
    ord           BIGSERIAL PRIMARY KEY,
    id            UUID NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    moderator_id  UUID NOT NULL REFERENCES principals (id),
    mode          TEXT NOT NULL CHECK (mode IN ('managed', 'resolver')),
    scenario      TEXT,
    scenario_text TEXT,
    ruleset       TEXT,
    settings      TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE posts (
    campaign_id UUID NOT NULL REFERENCES campaigns (id),
    seq         BIGINT NOT NULL CHECK (seq >= 1),
    stamp       TIMESTAMPTZ NOT NULL,
    author_id   UUID NOT NULL REFERENCES principals (id),
    side        TEXT,
    kind        TEXT NOT NULL,
    body        TEXT NOT NULL,
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL,
    PRIMARY KEY (campaign_id, seq)
);

CREATE TABLE outcomes (
    id          UUID PRIMARY KEY,
    campaign_id UUID NOT NULL,
    position    BIGINT NOT NULL CHECK (position >= 1),
    seq         BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    UNIQUE (campaign_id, position),
    FOREIGN KEY (campaign_id, seq) REFERENCES posts (campaign_id, seq)
);
CREATE INDEX outcomes_by_post ON outcomes (campaign_id, seq);

CREATE TABLE snapshots (
    campaign_id UUID NOT NULL,
    seq         BIGINT NOT NULL,
    state       TEXT NOT NULL,
    PRIMARY KEY (campaign_id, seq),
    FOREIGN KEY (campaign_id, seq) REFERENCES posts (campaign_id, seq)
);

CREATE TABLE idempotency_keys (
    principal_id UUID NOT NULL REFERENCES principals (id),
    key          TEXT NOT NULL,
    campaign_id  UUID NOT NULL,
    request_hash TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    PRIMARY KEY (principal_id, key)
);

CREATE FUNCTION refuse_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are append-only', TG_TABLE_NAME;
END;
$$;

CREATE TRIGGER posts_append_only BEFORE UPDATE OR DELETE ON posts
    FOR EACH ROW EXECUTE FUNCTION refuse_rewrite();
CREATE TRIGGER outcomes_append_only BEFORE UPDATE OR DELETE ON outcomes
    FOR EACH ROW EXECUTE FUNCTION refuse_rewrite();
CREATE TRIGGER snapshots_append_only BEFORE UPDATE OR DELETE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION refuse_rewrite();
