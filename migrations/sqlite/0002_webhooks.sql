-- Webhooks: endpoints a moderator registers per campaign, the outbox of deliveries (one row per
-- outcome and webhook active when the outcome was written, in the same transaction), and the
-- log of every delivery attempt. Times are UTC milliseconds since the Unix epoch.

CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    campaign_id     TEXT NOT NULL REFERENCES campaigns (id),
    url             TEXT NOT NULL,
    -- `whsec_` and the base64 of the signing key: needed in clear to sign.
    secret          TEXT NOT NULL,
    created_by      TEXT NOT NULL REFERENCES principals (id),
    created_at      INTEGER NOT NULL,
    disabled_at     INTEGER,
    disabled_reason TEXT
);
CREATE INDEX webhooks_by_campaign ON webhooks (campaign_id);

CREATE TABLE webhook_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id),
    outcome_id      TEXT NOT NULL REFERENCES outcomes (id),
    -- The JSON body sent, fixed when the outcome was written: the same on every retry.
    payload         TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    -- NULL: due at once.
    next_attempt_at INTEGER,
    -- A deliverer's lease on the row while it is attempting it.
    claimed_until   INTEGER,
    delivered_at    INTEGER,
    -- The endpoint answered 410 Gone: never again.
    gone            INTEGER NOT NULL DEFAULT 0 CHECK (gone IN (0, 1)),
    -- Out of attempts.
    given_up_at     INTEGER,
    UNIQUE (webhook_id, outcome_id)
);
CREATE INDEX webhook_outbox_pending ON webhook_outbox (next_attempt_at)
    WHERE delivered_at IS NULL AND gone = 0 AND given_up_at IS NULL;

CREATE TABLE webhook_deliveries (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    outbox_id    INTEGER NOT NULL REFERENCES webhook_outbox (id),
    attempt      INTEGER NOT NULL,
    attempted_at INTEGER NOT NULL,
    -- The HTTP status answered, or the error when there was no answer.
    status_code  INTEGER,
    error        TEXT,
    duration_ms  INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_by_outbox ON webhook_deliveries (outbox_id);
