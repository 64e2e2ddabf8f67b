-- Scenarios moderators upload: each kept as its text, addressed by the SHA-256 (hex) of that
-- text, and owned by the moderator who uploaded it. The same text uploaded again by its owner
-- is the same row; another moderator's upload of it is theirs. Rows are never changed or
-- removed, since campaigns bind the text into their creation records.
CREATE TABLE scenarios (
    moderator_id TEXT NOT NULL REFERENCES principals (id),
    id           TEXT NOT NULL CHECK (length(id) = 64),
    name         TEXT NOT NULL,
    title        TEXT NOT NULL,
    text         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (moderator_id, id)
);
CREATE TRIGGER scenarios_append_only_update BEFORE UPDATE ON scenarios
BEGIN SELECT RAISE(ABORT, 'scenarios are append-only'); END;
CREATE TRIGGER scenarios_append_only_delete BEFORE DELETE ON scenarios
BEGIN SELECT RAISE(ABORT, 'scenarios are append-only'); END;
