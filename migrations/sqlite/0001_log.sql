-- Adjutant's log on SQLite. Times are UTC milliseconds since the Unix epoch; ids are UUID text.
-- Posts, outcomes and snapshots are append-only: triggers refuse UPDATE and DELETE.

CREATE TABLE principals (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('moderator', 'player', 'bot')),
    name        TEXT NOT NULL,
    token_hash  BLOB NOT NULL UNIQUE,
    campaign_id TEXT,
    side        TEXT,
    created_by  TEXT REFERENCES principals (id),
    created_at  INTEGER NOT NULL
);

CREATE TABLE campaigns (
    ord           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    moderator_id  TEXT NOT NULL REFERENCES principals (id),
    mode          TEXT NOT NULL CHECK (mode IN ('managed', 'resolver')),
    scenario      TEXT,
    scenario_text TEXT,
    ruleset       TEXT,
    settings      TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);

CREATE TABLE posts (
    campaign_id TEXT NOT NULL REFERENCES campaigns (id),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    stamp_ms    INTEGER NOT NULL,
    author_id   TEXT NOT NULL REFERENCES principals (id),
    side        TEXT,
    kind        TEXT NOT NULL,
    body        TEXT NOT NULL,
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL,
    PRIMARY KEY (campaign_id, seq)
) WITHOUT ROWID;

CREATE TABLE outcomes (
    id          TEXT PRIMARY KEY,
    campaign_id TEXT NOT NULL,
    position    INTEGER NOT NULL CHECK (position >= 1),
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    UNIQUE (campaign_id, position),
    FOREIGN KEY (campaign_id, seq) REFERENCES posts (campaign_id, seq)
);
CREATE INDEX outcomes_by_post ON outcomes (campaign_id, seq);

CREATE TABLE snapshots (
    campaign_id TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    state       TEXT NOT NULL,
    PRIMARY KEY (campaign_id, seq),
    FOREIGN KEY (campaign_id, seq) REFERENCES posts (campaign_id, seq)
) WITHOUT ROWID;

CREATE TABLE idempotency_keys (
    principal_id TEXT NOT NULL REFERENCES principals (id),
    key          TEXT NOT NULL,
    campaign_id  TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    PRIMARY KEY (principal_id, key)
) WITHOUT ROWID;

CREATE TRIGGER posts_append_only_update BEFORE UPDATE ON posts
BEGIN SELECT RAISE(ABORT, 'posts are append-only'); END;
CREATE TRIGGER posts_append_only_delete BEFORE DELETE ON posts
BEGIN SELECT RAISE(ABORT, 'posts are append-only'); END;
CREATE TRIGGER outcomes_append_only_update BEFORE UPDATE ON outcomes
BEGIN SELECT RAISE(ABORT, 'outcomes are append-only'); END;
CREATE TRIGGER outcomes_append_only_delete BEFORE DELETE ON outcomes
BEGIN SELECT RAISE(ABORT, 'outcomes are append-only'); END;
CREATE TRIGGER snapshots_append_only_update BEFORE UPDATE ON snapshots
BEGIN SELECT RAISE(ABORT, 'snapshots are append-only'); END;
CREATE TRIGGER snapshots_append_only_delete BEFORE DELETE ON snapshots
BEGIN SELECT RAISE(ABORT, 'snapshots are append-only'); END;
