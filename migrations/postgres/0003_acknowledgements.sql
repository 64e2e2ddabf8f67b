-- A bot's acknowledgement that it posted an outcome to the forum. The first one stands.
CREATE TABLE acknowledgements (
    bot_id        UUID NOT NULL REFERENCES principals (id),
    outcome_id    UUID NOT NULL REFERENCES outcomes (id),
    campaign_id   UUID NOT NULL,
    forum_post_id TEXT NOT NULL,
    acked_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (bot_id, outcome_id)
);

CREATE TRIGGER acknowledgements_append_only BEFORE UPDATE OR DELETE ON acknowledgements
    FOR EACH ROW EXECUTE FUNCTION refuse_rewrite();
