//! Seeding: earlier posts written straight into the server's database, as the server writes them.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use adjutant_rules::chain::{Link, GENESIS};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::{Connection, Executor};

use crate::campaign::{order, RULESET};
use crate::child::BENCH_SIGNING_SEED;
use crate::{Error, Result};

/// The database a server runs on, as the bench reaches it too.
pub enum Database<'a> {
    Sqlite(&'a Path),
    Postgres(&'a str),
}

impl Database<'_> {
    pub fn url(&self) -> String {
        match self {
            Self::Sqlite(file) => format!("sqlite://{}", file.display()),
            Self::Postgres(url) => (*url).to_owned(),
        }
    }

    pub async fn seeder(&self) -> Result<Seeder> {
        match self {
            Self::Sqlite(file) => Seeder::sqlite(file).await,
            Self::Postgres(url) => Seeder::postgres(url).await,
        }
    }
}

/// A database the bench seeds posts into, beside the server that owns it (the server made the
/// schema and the campaigns; the bench only appends posts and their outcomes). Seeding is the
/// set-up, not a measured figure, so its own commits do not wait for the disk (SQLite
/// `synchronous=NORMAL` in WAL mode, PostgreSQL `synchronous_commit=off` for its session); the
/// server's connections keep their own settings.
pub enum Seeder {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

/// A campaign's creation record, as the backend stores it: the chain starts from its hash.
struct CampaignRecord {
    name: String,
    moderator_id: String,
    mode: String,
    scenario: Option<String>,
    scenario_text: Option<String>,
    ruleset: Option<String>,
    settings: String,
    created_at: DateTime<Utc>,
    chain_genesis: String,
}

impl CampaignRecord {
    fn from_row<R: sqlx::Row>(row: &R, created_at: DateTime<Utc>) -> Result<Self>
    where
        for<'a> &'a str: sqlx::ColumnIndex<R>,
        for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
        for<'a> Option<String>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    {
        Ok(Self {
            name: row.try_get("name")?,
            moderator_id: row.try_get("moderator_id")?,
            mode: row.try_get("mode")?,
            scenario: row.try_get("scenario")?,
            scenario_text: row.try_get("scenario_text")?,
            ruleset: row.try_get("ruleset")?,
            settings: row.try_get("settings")?,
            created_at,
            chain_genesis: row.try_get("chain_genesis")?,
        })
    }

    /// The hash the campaign's first post links to, as the server's does.
    fn genesis(&self, campaign: &str) -> String {
        if self.chain_genesis == "legacy" {
            return GENESIS.to_owned();
        }
        adjutant_rules::chain::CreationRecord {
            campaign_id: campaign,
            name: &self.name,
            moderator_id: &self.moderator_id,
            mode: &self.mode,
            scenario: self.scenario.as_deref(),
            scenario_text: self.scenario_text.as_deref(),
            ruleset: self.ruleset.as_deref(),
            settings: &self.settings,
            created_at: self.created_at,
        }
        .genesis()
    }
}

/// Where a campaign's seeded posts start: the campaign, the player who writes them, and the
/// hash the first one links to.
struct ChainStart {
    /// The campaign's place among those seeded together, which orders its outcomes' ids.
    order: u64,
    campaign: String,
    author: String,
    side: Option<String>,
    genesis: String,
}

/// One seeded post and its outcome, as the server would have written them.
struct SeededPost {
    seq: i64,
    stamp: DateTime<Utc>,
    body: String,
    prev_hash: String,
    hash: String,
    signature: String,
    outcome_id: uuid::Uuid,
    outcome: String,
}

/// Rows per multi-row INSERT on SQLite: within its 32,766 bound parameters. (PostgreSQL takes a
/// campaign's posts in one statement, each column an array.)
const SEED_ROWS_PER_INSERT: usize = 500;

/// Campaigns whose posts are computed at once (hashes, signatures, dice), while the database
/// writes the ones before.
const SEED_WORKERS: usize = 2;

fn signing_key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&BENCH_SIGNING_SEED)
}

/// The receipts' key id, as the server names its key.
fn receipt_key_id() -> String {
    use sha2::Digest;
    format!("ed25519:{}", &hex::encode(sha2::Sha256::digest(signing_key().verifying_key().as_bytes()))[..16])
}

/// `count` `resolve` posts after `start`, a millisecond apart from `first`, each hashed and
/// chained, its receipt signed with the server's key, and its outcome rolled from its own dice
/// stream exactly as the server does, so the audit verifies them.
fn seeded_posts(start: &ChainStart, count: i64, first: DateTime<Utc>) -> Result<Vec<SeededPost>> {
    use adjutant_rules::resolver;
    use adjutant_rules::DiceStream;
    use ed25519_dalek::Signer;
    let ruleset = resolver::ruleset(RULESET).ok_or("no ruleset")?;
    let signer = signing_key();
    let mut prev_hash = start.genesis.clone();
    let mut posts = Vec::with_capacity(usize::try_from(count)?);
    for seq in 1..=count {
        let stamp = first + chrono::Duration::milliseconds(seq);
        let order = order(seq as usize, seq as u64);
        let body = serde_json::to_string(&order["body"])?;
        let hash = Link {
            prev_hash: &prev_hash,
            campaign_id: &start.campaign,
            seq,
            stamp,
            author_id: &start.author,
            side: start.side.as_deref(),
            kind: "resolve",
            body: &body,
        }
        .hash();
        let message = adjutant_rules::chain::receipt_message(&start.campaign, seq, stamp, &hash);
        let signature = hex::encode(signer.sign(message.as_bytes()).to_bytes());
        let dice = DiceStream::new(&start.campaign, seq as u64, stamp);
        let resolution = resolver::resolve(ruleset, "formation_test", &order["body"]["inputs"], dice)
            .map_err(|r| format!("seeding post {seq}: {r}"))?;
        let outcome = json!({"headline": resolution.headline, "data": serde_json::to_value(&resolution)?}).to_string();
        let prev = std::mem::replace(&mut prev_hash, hash.clone());
        posts.push(SeededPost {
            seq,
            stamp,
            body,
            prev_hash: prev,
            hash,
            signature,
            outcome_id: outcome_id(first, start.order * count as u64 + seq as u64),
            outcome,
        });
    }
    Ok(posts)
}

/// The id of the `n`th outcome seeded: time-ordered (UUIDv7, the seeding's first stamp and then
/// `n`), so the seeded outcomes are appended to the end of the id index instead of all over it.
fn outcome_id(first: DateTime<Utc>, n: u64) -> uuid::Uuid {
    let mut counter = [0u8; 10];
    counter[2..].copy_from_slice(&n.to_be_bytes());
    uuid::Builder::from_unix_timestamp_millis(first.timestamp_millis() as u64, &counter).into_uuid()
}

impl Seeder {
    pub async fn sqlite(db_file: &Path) -> Result<Self> {
        use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
        let options = SqliteConnectOptions::new()
            .filename(db_file)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
            .pragma("cache_size", "-262144")
            .busy_timeout(Duration::from_secs(30));
        Ok(Self::Sqlite(sqlx::SqliteConnection::connect_with(&options).await?))
    }

    pub async fn postgres(url: &str) -> Result<Self> {
        let mut conn = sqlx::PgConnection::connect(url).await?;
        conn.execute("SET synchronous_commit = off").await?;
        Ok(Self::Postgres(conn))
    }

    /// The campaign's creation record and the player whose posts are seeded (the first side).
    async fn chain_start(&mut self, order: u64, campaign: &str) -> Result<ChainStart> {
        const PLAYER: &str =
            "SELECT id, side FROM principals WHERE kind = 'player' AND campaign_id = $1 ORDER BY side LIMIT 1";
        const RECORD: &str =
            "SELECT name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis
             FROM campaigns WHERE id = $1";
        let (author, side, record) = match self {
            Self::Sqlite(conn) => {
                let (author, side): (String, Option<String>) =
                    sqlx::query_as(PLAYER).bind(campaign).fetch_one(&mut *conn).await?;
                let row = sqlx::query(RECORD).bind(campaign).fetch_one(&mut *conn).await?;
                let created_at: i64 = sqlx::Row::try_get(&row, "created_at")?;
                let created_at = DateTime::from_timestamp_millis(created_at).ok_or("bad created_at")?;
                (author, side, CampaignRecord::from_row(&row, created_at)?)
            }
            Self::Postgres(conn) => {
                let id = uuid::Uuid::parse_str(campaign)?;
                let (author, side): (uuid::Uuid, Option<String>) =
                    sqlx::query_as(PLAYER).bind(id).fetch_one(&mut *conn).await?;
                let record = RECORD.replace("moderator_id,", "moderator_id::text AS moderator_id,");
                let row = sqlx::query(&record).bind(id).fetch_one(&mut *conn).await?;
                let created_at: DateTime<Utc> = sqlx::Row::try_get(&row, "created_at")?;
                (author.to_string(), side, CampaignRecord::from_row(&row, created_at)?)
            }
        };
        let genesis = record.genesis(campaign);
        Ok(ChainStart { order, campaign: campaign.to_owned(), author, side, genesis })
    }

    /// Appends the posts and their outcomes in one transaction, many rows to a statement.
    async fn insert(&mut self, start: &ChainStart, key_id: &str, posts: &[SeededPost]) -> Result<()> {
        const POSTS: &str =
            "INSERT INTO posts (campaign_id, seq, {stamp}, author_id, side, kind, body, prev_hash, hash,
                                                receipt_key_id, receipt_signature) ";
        const OUTCOMES: &str = "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data) ";
        match self {
            Self::Sqlite(conn) => {
                let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
                for chunk in posts.chunks(SEED_ROWS_PER_INSERT) {
                    let mut insert = sqlx::QueryBuilder::<sqlx::Sqlite>::new(POSTS.replace("{stamp}", "stamp_ms"));
                    insert.push_values(chunk, |mut row, post| {
                        row.push_bind(&start.campaign)
                            .push_bind(post.seq)
                            .push_bind(post.stamp.timestamp_millis())
                            .push_bind(&start.author)
                            .push_bind(&start.side)
                            .push_bind("resolve")
                            .push_bind(&post.body)
                            .push_bind(&post.prev_hash)
                            .push_bind(&post.hash)
                            .push_bind(key_id)
                            .push_bind(&post.signature);
                    });
                    insert.build().execute(&mut *tx).await?;
                    let mut insert = sqlx::QueryBuilder::<sqlx::Sqlite>::new(OUTCOMES);
                    insert.push_values(chunk, |mut row, post| {
                        row.push_bind(post.outcome_id.to_string())
                            .push_bind(&start.campaign)
                            .push_bind(post.seq)
                            .push_bind(post.seq)
                            .push_bind("resolution")
                            .push_bind(&post.outcome);
                    });
                    insert.build().execute(&mut *tx).await?;
                }
                tx.commit().await?;
            }
            Self::Postgres(conn) => {
                // One statement for the posts and one for the outcomes, each column an array.
                let campaign = uuid::Uuid::parse_str(&start.campaign)?;
                let author = uuid::Uuid::parse_str(&start.author)?;
                let column = |f: fn(&SeededPost) -> &String| posts.iter().map(f).cloned().collect::<Vec<_>>();
                let seqs: Vec<i64> = posts.iter().map(|p| p.seq).collect();
                let mut tx = conn.begin().await?;
                sqlx::query(
                    "INSERT INTO posts (campaign_id, seq, stamp, author_id, side, kind, body, prev_hash, hash,
                                        receipt_key_id, receipt_signature)
                     SELECT $1, p.seq, p.stamp, $2, $3, 'resolve', p.body, p.prev_hash, p.hash, $4, p.signature
                     FROM UNNEST($5::bigint[], $6::timestamptz[], $7::text[], $8::text[], $9::text[], $10::text[])
                          AS p (seq, stamp, body, prev_hash, hash, signature)",
                )
                .bind(campaign)
                .bind(author)
                .bind(&start.side)
                .bind(key_id)
                .bind(&seqs)
                .bind(posts.iter().map(|p| p.stamp).collect::<Vec<_>>())
                .bind(column(|p| &p.body))
                .bind(column(|p| &p.prev_hash))
                .bind(column(|p| &p.hash))
                .bind(column(|p| &p.signature))
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data)
                     SELECT o.id, $1, o.seq, o.seq, 'resolution', o.data
                     FROM UNNEST($2::uuid[], $3::bigint[], $4::text[]) AS o (id, seq, data)",
                )
                .bind(campaign)
                .bind(posts.iter().map(|p| p.outcome_id).collect::<Vec<_>>())
                .bind(&seqs)
                .bind(column(|p| &p.outcome))
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
            }
        }
        Ok(())
    }
}

/// Appends `count` earlier posts to each campaign straight into the database, each campaign in
/// one transaction: a few campaigns' posts are computed on blocking threads while the database
/// writes the ones before. The stamps are a millisecond apart and end a minute before the
/// seeding began, so the server's next stamp is later still.
pub async fn seed(mut db: Seeder, campaigns: &[String], count: i64) -> Result<()> {
    let first: DateTime<Utc> = Utc::now() - chrono::Duration::milliseconds(count + 60_000);
    let mut starts = Vec::with_capacity(campaigns.len());
    for (order, campaign) in campaigns.iter().enumerate() {
        starts.push(Arc::new(db.chain_start(order as u64, campaign).await?));
    }
    let starts = Arc::new(starts);
    let next = Arc::new(AtomicUsize::new(0));
    let (send, mut computed) = tokio::sync::mpsc::channel::<(usize, Vec<SeededPost>)>(SEED_WORKERS);
    let mut workers = Vec::new();
    for _ in 0..SEED_WORKERS {
        let (starts, next, send) = (starts.clone(), next.clone(), send.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(start) = starts.get(i).cloned() else { return Ok::<(), Error>(()) };
                let posts = tokio::task::spawn_blocking(move || seeded_posts(&start, count, first)).await??;
                if send.send((i, posts)).await.is_err() {
                    return Ok(());
                }
            }
        }));
    }
    drop(send);
    let key_id = receipt_key_id();
    while let Some((i, posts)) = computed.recv().await {
        db.insert(&starts[i], &key_id, &posts).await?;
    }
    for worker in workers {
        worker.await??;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn seeded_posts_chain_from_the_genesis_with_receipts_the_server_s_key_verifies() {
        use adjutant_rules::DiceStream;
        use ed25519_dalek::Verifier;
        let start = ChainStart {
            order: 0,
            campaign: uuid::Uuid::new_v4().to_string(),
            author: uuid::Uuid::new_v4().to_string(),
            side: Some("confederate".into()),
            genesis: "ab".repeat(32),
        };
        let first = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let posts = seeded_posts(&start, 40, first).unwrap();
        assert_eq!(posts.len(), 40);
        let key = signing_key().verifying_key();
        let mut prev_hash = start.genesis.clone();
        for (n, post) in posts.iter().enumerate() {
            assert_eq!(post.seq, n as i64 + 1);
            assert_eq!(post.stamp, first + chrono::Duration::milliseconds(post.seq));
            assert_eq!(post.prev_hash, prev_hash);
            let link = Link {
                prev_hash: &prev_hash,
                campaign_id: &start.campaign,
                seq: post.seq,
                stamp: post.stamp,
                author_id: &start.author,
                side: Some("confederate"),
                kind: "resolve",
                body: &post.body,
            };
            assert_eq!(post.hash, link.hash());
            let message = adjutant_rules::chain::receipt_message(&start.campaign, post.seq, post.stamp, &post.hash);
            let signature: [u8; 64] = hex::decode(&post.signature).unwrap().try_into().unwrap();
            key.verify(message.as_bytes(), &ed25519_dalek::Signature::from_bytes(&signature)).unwrap();
            // The outcome is the one the post's own dice give.
            let ruleset = adjutant_rules::resolver::ruleset(RULESET).unwrap();
            let inputs: Value = serde_json::from_str::<Value>(&post.body).unwrap()["inputs"].clone();
            let dice = DiceStream::new(&start.campaign, post.seq as u64, post.stamp);
            let again = adjutant_rules::resolver::resolve(ruleset, "formation_test", &inputs, dice).unwrap();
            let stored: Value = serde_json::from_str(&post.outcome).unwrap();
            assert_eq!(stored["data"], serde_json::to_value(&again).unwrap());
            prev_hash = post.hash.clone();
        }
        assert!(receipt_key_id().starts_with("ed25519:") && receipt_key_id().len() == 24);
        // The outcomes' ids rise with the post and with the campaign's place in the seeding.
        assert!(posts.windows(2).all(|w| w[0].outcome_id < w[1].outcome_id));
        let next_campaign = seeded_posts(&ChainStart { order: 1, ..start }, 40, first).unwrap();
        assert!(posts[39].outcome_id < next_campaign[0].outcome_id);
        assert_eq!(next_campaign[0].outcome_id.get_version_num(), 7);
    }
}
