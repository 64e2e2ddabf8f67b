-- Scenarios moderators upload: each kept as its text, addressed by the SHA-256 (hex) of that
-- text, and owned by the moderator who uploaded it. The same text uploaded again by its owner
-- is the same row; another moderator's upload of it is theirs. Rows are never changed or
-- removed, since campaigns bind the text into their creation records.
CREATE TABLE scenarios (
    moderator_id UUID NOT NULL REFERENCES principals (id),
    id           TEXT NOT NULL CHECK (length(id) = 64),
    name         TEXT NOT NULL,
    title        TEXT NOT NULL,
    text         TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (moderator_id, id)
);
CREATE TRIGGER scenarios_append_only BEFORE UPDATE OR DELETE ON scenarios
    FOR EACH ROW EXECUTE FUNCTION refuse_rewrite();
