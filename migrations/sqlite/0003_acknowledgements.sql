-- A bot's acknowledgement that it posted an outcome to the forum. The first one stands.
CREATE TABLE acknowledgements (
    bot_id        TEXT NOT NULL REFERENCES principals (id),
    outcome_id    TEXT NOT NULL REFERENCES outcomes (id),
    campaign_id   TEXT NOT NULL,
    forum_post_id TEXT NOT NULL,
    acked_at      INTEGER NOT NULL,
    PRIMARY KEY (bot_id, outcome_id)
) WITHOUT ROWID;

CREATE TRIGGER acknowledgements_append_only_update BEFORE UPDATE ON acknowledgements
BEGIN SELECT RAISE(ABORT, 'acknowledgements are append-only'); END;
CREATE TRIGGER acknowledgements_append_only_delete BEFORE DELETE ON acknowledgements
BEGIN SELECT RAISE(ABORT, 'acknowledgements are append-only'); END;
