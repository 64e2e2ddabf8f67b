-- The mails the server sends players (their turn, and reminders before a deadline), queued once
-- under a key naming what each is about, so a restart or a second server never sends one twice.
-- Times are UTC milliseconds.
CREATE TABLE mail_outbox (
    key           TEXT PRIMARY KEY,
    campaign_id   TEXT NOT NULL REFERENCES campaigns (id),
    principal_id  TEXT NOT NULL REFERENCES principals (id),
    to_addr       TEXT NOT NULL,
    subject       TEXT NOT NULL,
    body          TEXT NOT NULL,
    about         TEXT NOT NULL,
    due_at        INTEGER NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    claimed_until INTEGER,
    sent_at       INTEGER,
    skipped       TEXT,
    last_error    TEXT
);
CREATE INDEX mail_outbox_due ON mail_outbox (due_at) WHERE sent_at IS NULL;
CREATE INDEX mail_outbox_by_campaign ON mail_outbox (campaign_id, due_at);
