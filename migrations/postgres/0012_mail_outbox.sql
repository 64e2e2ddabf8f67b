-- The mails the server sends players (their turn, and reminders before a deadline), queued once
-- under a key naming what each is about, so a restart or a second server never sends one twice.
CREATE TABLE mail_outbox (
    key           TEXT PRIMARY KEY,
    campaign_id   UUID NOT NULL REFERENCES campaigns (id),
    principal_id  UUID NOT NULL REFERENCES principals (id),
    to_addr       TEXT NOT NULL,
    subject       TEXT NOT NULL,
    body          TEXT NOT NULL,
    about         TEXT NOT NULL,
    due_at        TIMESTAMPTZ NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    claimed_until TIMESTAMPTZ,
    sent_at       TIMESTAMPTZ,
    skipped       TEXT,
    last_error    TEXT
);
CREATE INDEX mail_outbox_due ON mail_outbox (due_at) WHERE sent_at IS NULL;
CREATE INDEX mail_outbox_by_campaign ON mail_outbox (campaign_id, due_at);
