-- Webhooks: endpoints a moderator registers per campaign, the outbox of deliveries (one row per
-- outcome and webhook active when the outcome was written, in the same transaction), and the
-- log of every delivery attempt.

CREATE TABLE webhooks (
    id              UUID PRIMARY KEY,
    campaign_id     UUID NOT NULL REFERENCES campaigns (id),
    url             TEXT NOT NULL,
    -- `whsec_` and the base64 of the signing key: needed in clear to sign.
    secret          TEXT NOT NULL,
    created_by      UUID NOT NULL REFERENCES principals (id),
    created_at      TIMESTAMPTZ NOT NULL,
    disabled_at     TIMESTAMPTZ,
    disabled_reason TEXT
);
CREATE INDEX webhooks_by_campaign ON webhooks (campaign_id);

CREATE TABLE webhook_outbox (
    id              BIGSERIAL PRIMARY KEY,
    webhook_id      UUID NOT NULL REFERENCES webhooks (id),
    outcome_id      UUID NOT NULL REFERENCES outcomes (id),
    -- The JSON body sent, fixed when the outcome was written: the same on every retry.
    payload         TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    -- NULL: due at once.
    next_attempt_at TIMESTAMPTZ,
    -- A replica's lease on the row while it is attempting it.
    claimed_until   TIMESTAMPTZ,
    delivered_at    TIMESTAMPTZ,
    -- The endpoint answered 410 Gone: never again.
    gone            BOOLEAN NOT NULL DEFAULT FALSE,
    -- Out of attempts.
    given_up_at     TIMESTAMPTZ,
    UNIQUE (webhook_id, outcome_id)
);
CREATE INDEX webhook_outbox_pending ON webhook_outbox (next_attempt_at)
    WHERE delivered_at IS NULL AND NOT gone AND given_up_at IS NULL;

CREATE TABLE webhook_deliveries (
    id           BIGSERIAL PRIMARY KEY,
    outbox_id    BIGINT NOT NULL REFERENCES webhook_outbox (id),
    attempt      INTEGER NOT NULL,
    attempted_at TIMESTAMPTZ NOT NULL,
    -- The HTTP status answered, or the error when there was no answer.
    status_code  INTEGER,
    error        TEXT,
    duration_ms  BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_by_outbox ON webhook_deliveries (outbox_id);
