//! Appending posts: the steps of [`adjutant_store::append`] in PostgreSQL's SQL.

use adjutant_store::append::{step, AppendSteps, KnownKey, LastPost, QuotaCount};
use adjutant_store::row::{self, Encoding, OUTCOME_COLUMNS};
use adjutant_store::{AppendRequest, Outcome, Post, Result, Tail};
use async_trait::async_trait;
use sqlx::{PgPool, Postgres, Transaction};
use tracing::Instrument;
use uuid::Uuid;

use crate::db::{map_err, Db};
use crate::log::{self, POST_COLUMNS};

/// The Standard Webhooks body of each outcome of one post, for each active webhook of its campaign.
const OUTBOX_INSERT: &str = "INSERT INTO webhook_outbox (webhook_id, outcome_id, payload)
     SELECT w.id, o.id, json_build_object(
         'type', 'outcome.created',
         'timestamp', $1::text,
         'data', json_build_object(
             'id', o.id, 'campaign_id', o.campaign_id, 'position', o.position, 'seq', o.seq,
             'kind', o.kind, 'headline', o.data::json ->> 'headline', 'data', o.data::json -> 'data',
             'hash', p.hash,
             'receipt', CASE WHEN p.receipt_key_id IS NULL THEN NULL
                        ELSE json_build_object('key_id', p.receipt_key_id, 'signature', p.receipt_signature) END))::text
     FROM posts p
     JOIN outcomes o ON o.campaign_id = p.campaign_id
         AND o.position > COALESCE((SELECT before.outcomes_through FROM posts before
                                    WHERE before.campaign_id = p.campaign_id AND before.seq = p.seq - 1), 0)
         AND o.position <= p.outcomes_through
     JOIN webhooks w ON w.campaign_id = o.campaign_id AND w.disabled_at IS NULL
     WHERE p.campaign_id = $2 AND p.seq = $3
     ORDER BY o.position, w.created_at, w.id";

/// An append's steps, inside a transaction that holds the campaign's row lock (`FOR UPDATE`):
/// appends to one campaign take turns, across replicas too.
pub(crate) struct Append(Transaction<'static, Postgres>);

impl Append {
    /// Opens a batch's transaction.
    pub(crate) async fn begin(pool: PgPool) -> Result<Self> {
        let transaction = pool.begin().await.map_err(map_err)?;
        Ok(Append(transaction))
    }
}

#[async_trait]
impl AppendSteps for Append {
    async fn known_key(&mut self, principal_id: Uuid, key: &str) -> Result<Option<KnownKey>> {
        let row = sqlx::query(
            "SELECT campaign_id, request_hash, seq FROM idempotency_keys WHERE principal_id = $1 AND key = $2",
        )
        .bind(principal_id)
        .bind(key)
        .fetch_optional(&mut *self.0)
        .await
        .map_err(map_err)?;
        Db::decode_optional(row, row::known_key)
    }

    async fn post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        log::post(&mut *self.0, campaign_id, seq).await
    }

    async fn count_posts_by_authors(&mut self, asks: &[QuotaCount]) -> Result<Vec<i64>> {
        let campaigns: Vec<Uuid> = asks.iter().map(|ask| ask.campaign_id).collect();
        let authors: Vec<Uuid> = asks.iter().map(|ask| ask.author_id).collect();
        let kinds: Vec<Option<&str>> = asks.iter().map(|ask| ask.kind.as_deref()).collect();
        let since: Vec<chrono::DateTime<chrono::Utc>> = asks.iter().map(|ask| ask.since).collect();
        // Each count as a read of one author's count makes it; all in one round trip, in the order asked.
        sqlx::query_scalar(
            "SELECT (SELECT COUNT(*) FROM posts p WHERE p.campaign_id = a.campaign_id AND p.author_id = a.author_id
                       AND (p.kind = a.kind OR a.kind IS NULL) AND p.stamp >= a.since)
             FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[])
               WITH ORDINALITY AS a (campaign_id, author_id, kind, since, n)
             ORDER BY a.n",
        )
        .bind(&campaigns)
        .bind(&authors)
        .bind(&kinds)
        .bind(&since)
        .fetch_all(&mut *self.0)
        .await
        .map_err(map_err)
    }

    async fn outcomes_of_post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(&mut *self.0, campaign_id, seq - 1, seq).await
    }

    async fn last_post(&mut self, campaign_id: Uuid) -> Result<Option<LastPost>> {
        let row = sqlx::query("SELECT seq, hash, stamp FROM posts WHERE campaign_id = $1 ORDER BY seq DESC LIMIT 1")
            .bind(campaign_id)
            .fetch_optional(&mut *self.0)
            .await
            .map_err(map_err)?;
        Db::decode_optional(row, row::last_post)
    }

    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        log::snapshot_at(&mut *self.0, campaign_id, seq).await
    }

    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64> {
        sqlx::query_scalar(
            "SELECT COALESCE((SELECT position FROM outcomes WHERE campaign_id = $1 ORDER BY position DESC LIMIT 1), 0)::BIGINT",
        )
            .bind(campaign_id)
            .fetch_one(&mut *self.0)
            .await
            .map_err(map_err)
    }

    async fn insert_post(&mut self, _campaign_id: Uuid, post: &Post, outcomes_through: i64) -> Result<()> {
        self.insert_posts(&[(post, outcomes_through)]).await
    }

    async fn insert_outcome(&mut self, outcome: &Outcome) -> Result<()> {
        self.insert_outcomes(&[outcome]).await
    }

    async fn any_known_key(&mut self, keys: &[(Uuid, &str)]) -> Result<bool> {
        let (principals, keys): (Vec<Uuid>, Vec<&str>) = keys.iter().copied().unzip();
        // Each key looked up by the primary key (a LATERAL subquery with a LIMIT is never made
        // into a join), whatever the table's size when the statement is planned: as a join, it
        // can be planned as a hash join over the whole table.
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM UNNEST($1::uuid[], $2::text[]) AS asked (principal_id, key)
                 CROSS JOIN LATERAL (SELECT 1 FROM idempotency_keys k
                                     WHERE k.principal_id = asked.principal_id AND k.key = asked.key
                                     LIMIT 1) AS known)",
        )
        .bind(principals)
        .bind(keys)
        .fetch_one(&mut *self.0)
        .await
        .map_err(map_err)
    }

    async fn has_webhooks(&mut self, campaign_id: Uuid) -> Result<bool> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = $1 AND disabled_at IS NULL)")
            .bind(campaign_id)
            .fetch_one(&mut *self.0)
            .await
            .map_err(map_err)
    }

    async fn lock_campaigns(&mut self, campaign_ids: &[Uuid]) -> Result<()> {
        // Rows are locked in the order sorted (the lock is taken above the sort), so replicas
        // never wait on each other in a circle.
        sqlx::query("SELECT id FROM campaigns WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(campaign_ids)
            .fetch_all(&mut *self.0)
            .await
            .map_err(map_err)
            .map(|_| ())
    }

    async fn tails(&mut self, campaign_ids: &[Uuid]) -> Result<Vec<(Uuid, Tail, bool)>> {
        let rows = sqlx::query(
            "SELECT asked.id AS campaign_id, last.seq AS last_seq, last.hash AS last_hash, last.stamp AS last_stamp,
                    snapshot.seq AS snapshot_seq, snapshot.state AS snapshot_state,
                    (SELECT position FROM outcomes WHERE campaign_id = asked.id ORDER BY position DESC LIMIT 1)
                      AS last_position,
                    CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = asked.id AND disabled_at IS NULL)
                      THEN 1 ELSE 0 END::INT8 AS webhooks
             FROM UNNEST($1::uuid[]) AS asked (id)
             LEFT JOIN LATERAL (SELECT seq, hash, stamp FROM posts WHERE campaign_id = asked.id
                                ORDER BY seq DESC LIMIT 1) last ON true
             LEFT JOIN LATERAL (SELECT seq, state FROM snapshots WHERE campaign_id = asked.id AND seq <= last.seq
                                ORDER BY seq DESC LIMIT 1) snapshot ON true",
        )
        .bind(campaign_ids)
        .fetch_all(&mut *self.0)
        .await
        .map_err(map_err)?;
        Db::decode_all(&rows, row::tail)
    }

    async fn tails_unless_known(
        &mut self,
        campaign_ids: &[Uuid],
        keys: &[(Uuid, &str)],
    ) -> Result<Option<Vec<(Uuid, Tail, bool)>>> {
        let (principals, keys): (Vec<Uuid>, Vec<&str>) = keys.iter().copied().unzip();
        // `tails` and `any_known_key` in one round trip: each row also says whether any key has
        // a record.
        let rows = sqlx::query(
            "SELECT asked.id AS campaign_id, last.seq AS last_seq, last.hash AS last_hash, last.stamp AS last_stamp,
                    snapshot.seq AS snapshot_seq, snapshot.state AS snapshot_state,
                    (SELECT position FROM outcomes WHERE campaign_id = asked.id ORDER BY position DESC LIMIT 1)
                      AS last_position,
                    CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = asked.id AND disabled_at IS NULL)
                      THEN 1 ELSE 0 END::INT8 AS webhooks,
                    known.found AS known
             FROM UNNEST($1::uuid[]) AS asked (id)
             LEFT JOIN LATERAL (SELECT seq, hash, stamp FROM posts WHERE campaign_id = asked.id
                                ORDER BY seq DESC LIMIT 1) last ON true
             LEFT JOIN LATERAL (SELECT seq, state FROM snapshots WHERE campaign_id = asked.id AND seq <= last.seq
                                ORDER BY seq DESC LIMIT 1) snapshot ON true
             CROSS JOIN (SELECT EXISTS (
                 SELECT 1 FROM UNNEST($2::uuid[], $3::text[]) AS key_asked (principal_id, key)
                 CROSS JOIN LATERAL (SELECT 1 FROM idempotency_keys k
                                     WHERE k.principal_id = key_asked.principal_id AND k.key = key_asked.key
                                     LIMIT 1) AS found)) AS known (found)",
        )
        .bind(campaign_ids)
        .bind(principals)
        .bind(keys)
        .fetch_all(&mut *self.0)
        .instrument(step("tail"))
        .await
        .map_err(map_err)?;
        let known = match rows.first() {
            Some(row) => sqlx::Row::try_get::<bool, _>(row, "known").map_err(map_err)?,
            None => false,
        };
        if known {
            return Ok(None);
        }
        Db::decode_all(&rows, row::tail).map(Some)
    }

    async fn insert_posts(&mut self, posts: &[(&Post, i64)]) -> Result<()> {
        let sql = format!(
            "INSERT INTO posts ({POST_COLUMNS}, outcomes_through)
             SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[],
                                  $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[])"
        );
        bind_posts(sqlx::query(&sql), posts).execute(&mut *self.0).await.map_err(map_err)?;
        Ok(())
    }

    async fn insert_outcomes(&mut self, outcomes: &[&Outcome]) -> Result<()> {
        let sql = format!(
            "INSERT INTO outcomes ({OUTCOME_COLUMNS})
             SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::text[], $6::text[])"
        );
        bind_outcomes(sqlx::query(&sql), outcomes).execute(&mut *self.0).await.map_err(map_err)?;
        Ok(())
    }

    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()> {
        sqlx::query(OUTBOX_INSERT)
            .bind(timestamp)
            .bind(campaign_id)
            .bind(seq)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()> {
        sqlx::query("INSERT INTO snapshots (campaign_id, seq, state) VALUES ($1, $2, $3)")
            .bind(campaign_id)
            .bind(seq)
            .bind(state)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn remember_key(&mut self, request: &AppendRequest, seq: i64) -> Result<()> {
        self.remember_keys(&[(request, seq)]).await
    }

    async fn remember_keys(&mut self, keys: &[(&AppendRequest, i64)]) -> Result<()> {
        sqlx::query(
            "INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq)
             SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::bigint[])",
        )
        .bind(keys.iter().map(|(r, _)| r.author_id).collect::<Vec<_>>())
        .bind(keys.iter().map(|(r, _)| r.idempotency_key.as_str()).collect::<Vec<_>>())
        .bind(keys.iter().map(|(r, _)| r.campaign_id).collect::<Vec<_>>())
        .bind(keys.iter().map(|(r, _)| r.request_hash.as_str()).collect::<Vec<_>>())
        .bind(keys.iter().map(|&(_, seq)| seq).collect::<Vec<_>>())
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn lock_campaign(&mut self, campaign_id: Uuid) -> Result<()> {
        // Other replicas' appends to the campaign wait here until this batch commits.
        sqlx::query("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE")
            .bind(campaign_id)
            .fetch_optional(&mut *self.0)
            .await
            .map_err(map_err)
            .map(|_| ())
    }

    async fn execute(&mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.0).await.map_err(map_err).map(|_| ())
    }

    async fn notify(&mut self, heads: &[(Uuid, i64)]) -> Result<()> {
        if heads.is_empty() {
            return Ok(());
        }
        // Inside the transaction: PostgreSQL sends each notice when, and only if, it commits.
        let notices: Vec<String> =
            heads.iter().map(|(campaign_id, seq)| crate::listen::notice(*campaign_id, *seq)).collect();
        sqlx::query("SELECT pg_notify($1, notice) FROM unnest($2::text[]) AS notice")
            .bind(crate::listen::CHANNEL)
            .bind(&notices)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)
            .map(|_| ())
    }

    async fn write_rows(
        &mut self,
        posts: &[(&Post, i64)],
        outcomes: &[&Outcome],
        keys: &[(&AppendRequest, i64)],
        heads: &[(Uuid, i64)],
    ) -> Result<()> {
        // One statement, one round trip: each table's rows from column arrays, and the notices
        // (sent when, and only if, the transaction commits). The outcomes' foreign key to their
        // posts is checked at the statement's end, when both are in.
        let notices: Vec<String> =
            heads.iter().map(|(campaign_id, seq)| crate::listen::notice(*campaign_id, *seq)).collect();
        let sql = format!(
            "WITH new_posts AS (
                 INSERT INTO posts ({POST_COLUMNS}, outcomes_through)
                 SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::timestamptz[], $4::uuid[], $5::text[],
                                      $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                                      $12::bigint[])),
             new_outcomes AS (
                 INSERT INTO outcomes ({OUTCOME_COLUMNS})
                 SELECT * FROM UNNEST($13::uuid[], $14::uuid[], $15::bigint[], $16::bigint[], $17::text[],
                                      $18::text[])),
             new_keys AS (
                 INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq)
                 SELECT * FROM UNNEST($19::uuid[], $20::text[], $21::uuid[], $22::text[], $23::bigint[]))
             SELECT pg_notify($24, notice) FROM UNNEST($25::text[]) AS notice"
        );
        bind_outcomes(bind_posts(sqlx::query(&sql), posts), outcomes)
            .bind(keys.iter().map(|(r, _)| r.author_id).collect::<Vec<_>>())
            .bind(keys.iter().map(|(r, _)| r.idempotency_key.as_str()).collect::<Vec<_>>())
            .bind(keys.iter().map(|(r, _)| r.campaign_id).collect::<Vec<_>>())
            .bind(keys.iter().map(|(r, _)| r.request_hash.as_str()).collect::<Vec<_>>())
            .bind(keys.iter().map(|&(_, seq)| seq).collect::<Vec<_>>())
            .bind(crate::listen::CHANNEL)
            .bind(&notices)
            .execute(&mut *self.0)
            .instrument(step("insert_post"))
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn rollback(self) -> Result<()> {
        self.0.rollback().await.map_err(map_err)
    }

    async fn commit(self) -> Result<()> {
        self.0.commit().await.map_err(map_err)
    }
}

/// Binds a batch's posts as the twelve column arrays `$1`…`$12` of an `UNNEST` into `posts`
/// ([`POST_COLUMNS`], then `outcomes_through`): the first parameters the query binds.
fn bind_posts<'q>(
    query: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    posts: &'q [(&'q Post, i64)],
) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(posts.iter().map(|(p, _)| p.campaign_id).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.seq).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.stamp).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.author_id).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.side.as_deref()).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.kind.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.body.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.prev_hash.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.hash.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.receipt.as_ref().map(|r| r.key_id.as_str())).collect::<Vec<_>>())
        .bind(posts.iter().map(|(p, _)| p.receipt.as_ref().map(|r| r.signature.as_str())).collect::<Vec<_>>())
        .bind(posts.iter().map(|&(_, outcomes_through)| outcomes_through).collect::<Vec<_>>())
}

/// Binds a batch's outcomes as the six column arrays of an `UNNEST` into `outcomes`
/// ([`OUTCOME_COLUMNS`]), the next parameters after those already bound.
fn bind_outcomes<'q>(
    query: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    outcomes: &'q [&'q Outcome],
) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(outcomes.iter().map(|o| o.id).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.campaign_id).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.position).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.seq).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.kind.as_str()).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.data.as_str()).collect::<Vec<_>>())
}
