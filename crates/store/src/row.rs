//! Rows into domain types, once for both backends.
//!
//! The backends store the same columns under the same names but encode ids and times in their
//! own way (SQLite keeps ids as text and times as milliseconds, PostgreSQL has `UUID` and
//! `TIMESTAMPTZ`). Each backend says how it reads those two ([`Encoding`]); how every other
//! column is read, and what a principal, a post or an outcome is made of, is said here.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::append::{KnownKey, LastPost};
use crate::{
    Acknowledgement, Campaign, ClaimedDelivery, ClaimedMail, Contact, DeliveryLogEntry, MailLogEntry, NewMail, Outcome,
    Post, Principal, PrincipalKind, Receipt, Result, ScenarioEntry, StoreError, Tail, UploadedScenario, Webhook,
};

/// One row of a backend's result, read column by column in domain types. A backend says how
/// it reads a column that may be NULL; a column that may not be is read through it.
pub trait Columns {
    fn opt_text(&self, column: &str) -> Result<Option<String>>;
    /// A `BIGINT` (`INTEGER` on SQLite).
    fn opt_int(&self, column: &str) -> Result<Option<i64>>;
    /// An `INTEGER` (4 bytes on PostgreSQL).
    fn opt_int32(&self, column: &str) -> Result<Option<i32>>;
    fn opt_uuid(&self, column: &str) -> Result<Option<Uuid>>;
    fn opt_time(&self, column: &str) -> Result<Option<DateTime<Utc>>>;

    fn text(&self, column: &str) -> Result<String> {
        self.opt_text(column)?.ok_or_else(|| null(column))
    }
    fn int(&self, column: &str) -> Result<i64> {
        self.opt_int(column)?.ok_or_else(|| null(column))
    }
    fn int32(&self, column: &str) -> Result<i32> {
        self.opt_int32(column)?.ok_or_else(|| null(column))
    }
    fn uuid(&self, column: &str) -> Result<Uuid> {
        self.opt_uuid(column)?.ok_or_else(|| null(column))
    }
    fn time(&self, column: &str) -> Result<DateTime<Utc>> {
        self.opt_time(column)?.ok_or_else(|| null(column))
    }
}

/// A reader of one row: [`principal`], [`post`], [`outcome`] and the others below.
pub type Read<T> = fn(&dyn Columns) -> Result<T>;

/// How a backend's database keeps ids and times, the two kinds of column whose types differ
/// between the backends; its rows are read through [`Encoding::decode`] and its kin.
pub trait Encoding: Sized {
    type Row: sqlx::Row;

    fn opt_uuid(row: &Self::Row, column: &str) -> Result<Option<Uuid>>;
    fn opt_time(row: &Self::Row, column: &str) -> Result<Option<DateTime<Utc>>>;

    fn decode<T>(row: &Self::Row, read: Read<T>) -> Result<T>
    where
        for<'r> Cols<'r, Self>: Columns,
    {
        read(&Cols(row))
    }

    fn decode_optional<T>(row: Option<Self::Row>, read: Read<T>) -> Result<Option<T>>
    where
        for<'r> Cols<'r, Self>: Columns,
    {
        row.as_ref().map(|row| read(&Cols(row))).transpose()
    }

    fn decode_all<T>(rows: &[Self::Row], read: Read<T>) -> Result<Vec<T>>
    where
        for<'r> Cols<'r, Self>: Columns,
    {
        rows.iter().map(|row| read(&Cols(row))).collect()
    }
}

/// A row of a backend whose ids and times are read as its [`Encoding`] says.
pub struct Cols<'r, E: Encoding>(&'r E::Row);

type Database<E> = <<E as Encoding>::Row as sqlx::Row>::Database;

impl<E: Encoding> Columns for Cols<'_, E>
where
    for<'c> &'c str: sqlx::ColumnIndex<E::Row>,
    for<'v> Option<String>: sqlx::Decode<'v, Database<E>> + sqlx::Type<Database<E>>,
    for<'v> Option<i64>: sqlx::Decode<'v, Database<E>> + sqlx::Type<Database<E>>,
    for<'v> Option<i32>: sqlx::Decode<'v, Database<E>> + sqlx::Type<Database<E>>,
{
    fn opt_text(&self, column: &str) -> Result<Option<String>> {
        get(self.0, column)
    }
    fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        get(self.0, column)
    }
    fn opt_int32(&self, column: &str) -> Result<Option<i32>> {
        get(self.0, column)
    }
    fn opt_uuid(&self, column: &str) -> Result<Option<Uuid>> {
        E::opt_uuid(self.0, column)
    }
    fn opt_time(&self, column: &str) -> Result<Option<DateTime<Utc>>> {
        E::opt_time(self.0, column)
    }
}

/// One column of a row, as sqlx decodes it.
pub fn get<'r, R, T>(row: &'r R, column: &str) -> Result<T>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    T: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    row.try_get(column).map_err(|e| bad_column(column, e))
}

fn null(column: &str) -> StoreError {
    bad_column(column, "NULL where a value belongs")
}

/// A column the row does not hold, or holds in another type: the schema and the code disagree.
pub fn bad_column(column: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Database(format!("column {column}: {err}"))
}

pub fn principal(row: &dyn Columns) -> Result<Principal> {
    let kind = row.text("kind")?;
    Ok(Principal {
        id: row.uuid("id")?,
        kind: PrincipalKind::parse(&kind).ok_or_else(|| StoreError::Database(format!("bad principal kind {kind}")))?,
        name: row.text("name")?,
        campaign_id: row.opt_uuid("campaign_id")?,
        side: row.opt_text("side")?,
        created_by: row.opt_uuid("created_by")?,
        created_at: row.time("created_at")?,
    })
}

/// A principal with the time its token was revoked, if it was.
pub fn principal_and_revocation(row: &dyn Columns) -> Result<(Principal, Option<DateTime<Utc>>)> {
    Ok((principal(row)?, row.opt_time("revoked_at")?))
}

pub fn campaign(row: &dyn Columns) -> Result<Campaign> {
    Ok(Campaign {
        id: row.uuid("id")?,
        name: row.text("name")?,
        moderator_id: row.uuid("moderator_id")?,
        mode: row.text("mode")?,
        scenario: row.opt_text("scenario")?,
        scenario_text: row.opt_text("scenario_text")?,
        ruleset: row.opt_text("ruleset")?,
        settings: row.text("settings")?,
        created_at: row.time("created_at")?,
        chain_genesis: row.text("chain_genesis")?,
    })
}

/// An uploaded scenario as a listing shows it (no text).
pub fn scenario_entry(row: &dyn Columns) -> Result<ScenarioEntry> {
    Ok(ScenarioEntry {
        id: row.text("id")?,
        moderator_id: row.uuid("moderator_id")?,
        name: row.text("name")?,
        title: row.text("title")?,
        created_at: row.time("created_at")?,
    })
}

/// An uploaded scenario with its text.
pub fn uploaded_scenario(row: &dyn Columns) -> Result<UploadedScenario> {
    Ok(UploadedScenario { entry: scenario_entry(row)?, text: row.text("text")? })
}

/// A post; its stamp is read from the column `stamp`.
pub fn post(row: &dyn Columns) -> Result<Post> {
    Ok(Post {
        campaign_id: row.uuid("campaign_id")?,
        seq: row.int("seq")?,
        stamp: row.time("stamp")?,
        author_id: row.uuid("author_id")?,
        side: row.opt_text("side")?,
        kind: row.text("kind")?,
        body: row.text("body")?,
        prev_hash: row.text("prev_hash")?,
        hash: row.text("hash")?,
        // Posts written before receipts were signed have neither column.
        receipt: match (row.opt_text("receipt_key_id")?, row.opt_text("receipt_signature")?) {
            (Some(key_id), Some(signature)) => Some(Receipt { key_id, signature }),
            _ => None,
        },
    })
}

/// An idempotency key's record.
pub fn known_key(row: &dyn Columns) -> Result<KnownKey> {
    Ok(KnownKey {
        campaign_id: row.uuid("campaign_id")?,
        request_hash: row.text("request_hash")?,
        seq: row.int("seq")?,
    })
}

/// The last post as the tail needs it; its stamp is read from the column `stamp`.
pub fn last_post(row: &dyn Columns) -> Result<LastPost> {
    Ok(LastPost { seq: row.int("seq")?, hash: row.text("hash")?, stamp: row.time("stamp")? })
}

/// A campaign's tail as one row: `campaign_id`, its last post's `last_seq`, `last_hash` and
/// `last_stamp` (all null before its first post), the last snapshot at or before that post
/// (`snapshot_seq`, `snapshot_state`), `last_position` (null before its first outcome) and
/// `webhooks` (1 when a webhook takes deliveries, else 0).
pub fn tail(row: &dyn Columns) -> Result<(Uuid, Tail, bool)> {
    let last_seq = row.opt_int("last_seq")?;
    let snapshot = match (row.opt_int("snapshot_seq")?, row.opt_text("snapshot_state")?) {
        (Some(seq), Some(state)) => Some((seq, state)),
        _ => None,
    };
    let tail = Tail {
        next_seq: last_seq.unwrap_or(0) + 1,
        prev_hash: row.opt_text("last_hash")?,
        prev_stamp: row.opt_time("last_stamp")?,
        snapshot,
        next_position: row.opt_int("last_position")?.unwrap_or(0) + 1,
    };
    Ok((row.uuid("campaign_id")?, tail, row.int("webhooks")? != 0))
}

/// The columns of an outcome, named and typed alike on both backends, in the order of an insert.
pub const OUTCOME_COLUMNS: &str = "id, campaign_id, position, seq, kind, data";

pub fn outcome(row: &dyn Columns) -> Result<Outcome> {
    Ok(Outcome {
        id: row.uuid("id")?,
        campaign_id: row.uuid("campaign_id")?,
        position: row.int("position")?,
        seq: row.int("seq")?,
        kind: row.text("kind")?,
        data: row.text("data")?,
    })
}

/// A state snapshot and the post it follows.
pub fn snapshot(row: &dyn Columns) -> Result<(i64, String)> {
    Ok((row.int("seq")?, row.text("state")?))
}

pub fn webhook(row: &dyn Columns) -> Result<Webhook> {
    Ok(Webhook {
        id: row.uuid("id")?,
        campaign_id: row.uuid("campaign_id")?,
        url: row.text("url")?,
        secret: row.text("secret")?,
        created_by: row.uuid("created_by")?,
        created_at: row.time("created_at")?,
        disabled_at: row.opt_time("disabled_at")?,
        disabled_reason: row.opt_text("disabled_reason")?,
    })
}

pub fn acknowledgement(row: &dyn Columns) -> Result<Acknowledgement> {
    Ok(Acknowledgement {
        bot_id: row.uuid("bot_id")?,
        outcome_id: row.uuid("outcome_id")?,
        campaign_id: row.uuid("campaign_id")?,
        forum_post_id: row.text("forum_post_id")?,
        acked_at: row.time("acked_at")?,
    })
}

/// An outbox row just claimed: `attempts` is the count before this claim.
pub fn claimed_delivery(row: &dyn Columns) -> Result<ClaimedDelivery> {
    Ok(ClaimedDelivery {
        outbox_id: row.int("id")?,
        webhook_id: row.uuid("webhook_id")?,
        outcome_id: row.uuid("outcome_id")?,
        payload: row.text("payload")?,
        attempt: row.int32("attempts")? + 1,
        url: row.text("url")?,
        secret: row.text("secret")?,
    })
}

pub fn delivery_log_entry(row: &dyn Columns) -> Result<DeliveryLogEntry> {
    Ok(DeliveryLogEntry {
        id: row.int("id")?,
        outbox_id: row.int("outbox_id")?,
        outcome_id: row.uuid("outcome_id")?,
        attempt: row.int32("attempt")?,
        attempted_at: row.time("attempted_at")?,
        status_code: row.opt_int32("status_code")?,
        error: row.opt_text("error")?,
        duration_ms: row.int("duration_ms")?,
    })
}

/// A row of `mail_outbox` as claimed: `attempts` counts this one.
pub fn claimed_mail(row: &dyn Columns) -> Result<ClaimedMail> {
    Ok(ClaimedMail {
        mail: NewMail {
            key: row.text("key")?,
            campaign_id: row.uuid("campaign_id")?,
            principal_id: row.uuid("principal_id")?,
            to: row.text("to_addr")?,
            subject: row.text("subject")?,
            body: row.text("body")?,
            about: row.text("about")?,
            due_at: row.time("due_at")?,
        },
        attempts: row.int32("attempts")?,
    })
}

/// A row of `mail_outbox` for the log.
pub fn mail_log_entry(row: &dyn Columns) -> Result<MailLogEntry> {
    Ok(MailLogEntry {
        key: row.text("key")?,
        principal_id: row.uuid("principal_id")?,
        to: row.text("to_addr")?,
        subject: row.text("subject")?,
        due_at: row.time("due_at")?,
        attempts: row.int32("attempts")?,
        sent_at: row.opt_time("sent_at")?,
        skipped: row.opt_text("skipped")?,
        last_error: row.opt_text("last_error")?,
    })
}

/// A row of `player_contacts`, with the principal it is for.
pub fn contact(row: &dyn Columns) -> Result<(Uuid, Contact)> {
    let contact = Contact {
        forum_handle: row.opt_text("forum_handle")?,
        discord_user_id: row.opt_text("discord_user_id")?,
        email: row.opt_text("email")?,
    };
    Ok((row.uuid("principal_id")?, contact))
}
