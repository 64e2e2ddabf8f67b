//! Seeding: earlier posts appended through the store the server uses (`adjutant-store`), on the
//! server's own database, as the server appends them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use adjutant_rules::chain::{CreationRecord, Link, GENESIS};
use adjutant_store::{
    AppendRequest, Campaign, Decision, Declined, NewOutcome, Post, PrincipalKind, Receipt, SharedDecide, Sign, Store,
    Tail,
};
use adjutant_store_postgres::PostgresStore;
use adjutant_store_sqlite::SqliteStore;
use chrono::{DateTime, Utc};
use serde_json::json;
use sha2::{Digest, Sha256};
use uuid::Uuid;

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
}

/// Posts one commit of the seeding store carries, and appends the bench keeps waiting at once
/// to fill them: a thousand posts are one statement a table on SQLite.
pub const SEED_BATCH: usize = 1_000;

/// Appends `count` earlier posts to each campaign, in order, through a store of the bench's own
/// on `db` (the server made the schema and the campaigns; the bench only appends). The stamps
/// are a millisecond apart and end a minute before the seeding began, so the server's next
/// stamp is later still.
///
/// Seeding is the set-up, not a measured figure: its posts go [`SEED_BATCH`] to a commit, and
/// on PostgreSQL its session's commits do not wait for the disk (`synchronous_commit=off`; the
/// server's connections keep their own settings).
pub async fn seed(db: &Database<'_>, campaigns: &[String], count: i64) -> Result<()> {
    match db {
        Database::Sqlite(_) => {
            let store = Arc::new(SqliteStore::open(&db.url()).await?.with_max_batch(SEED_BATCH));
            let seeded = append_all(store.clone(), campaigns, count).await;
            store.close().await;
            seeded
        }
        Database::Postgres(url) => {
            let separator = if url.contains('?') { '&' } else { '?' };
            let url = format!("{url}{separator}options[synchronous_commit]=off");
            let store = Arc::new(PostgresStore::open(&url).await?.with_max_batch(SEED_BATCH));
            let seeded = append_all(store.clone(), campaigns, count).await;
            store.close().await;
            seeded
        }
    }
}

/// [`SEED_BATCH`] appenders, each appending the next post of the seeding (campaign after
/// campaign) until all are written. Each post is decided on the tail the store hands over, so a
/// batch holds a campaign's posts in order whichever appender asked first.
async fn append_all<S: Store>(store: Arc<S>, campaigns: &[String], count: i64) -> Result<()> {
    let first: DateTime<Utc> = Utc::now() - chrono::Duration::milliseconds(count + 60_000);
    let sign = signer();
    let mut starts = Vec::with_capacity(campaigns.len());
    for (order, campaign) in campaigns.iter().enumerate() {
        starts.push(Arc::new(chain_start(&*store, order as u64, campaign, count, first).await?));
    }
    let starts = Arc::new(starts);
    let total = starts.len() as u64 * count.max(0) as u64;
    let next = Arc::new(AtomicU64::new(0));
    let mut appenders = tokio::task::JoinSet::new();
    for _ in 0..SEED_BATCH {
        let (store, starts, next, sign) = (store.clone(), starts.clone(), next.clone(), sign.clone());
        appenders.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total {
                    return Ok::<(), Error>(());
                }
                let start = starts[(n / count as u64) as usize].clone();
                let request = start.request(n % count as u64 + 1);
                let decide: SharedDecide = {
                    let (start, sign) = (start.clone(), sign.clone());
                    Arc::new(move |tail: &Tail| start.decide(tail, &sign))
                };
                store
                    .append_post(request, decide)
                    .await
                    .map_err(|e| format!("seeding a post of campaign {}: {e}", start.campaign))?;
            }
        });
    }
    while let Some(appended) = appenders.join_next().await {
        appended??;
    }
    Ok(())
}

/// Where a campaign's seeded posts start: the campaign, the player who writes them, and the
/// hash the first one links to.
struct ChainStart {
    /// The campaign's place among those seeded together, which orders its outcomes' ids.
    order: u64,
    campaign: Uuid,
    author: Uuid,
    side: Option<String>,
    genesis: String,
    /// The posts seeded into each campaign, and the stamp the first one follows.
    count: i64,
    first: DateTime<Utc>,
}

/// The campaign's creation record and the player whose posts are seeded (the first side by
/// name), as the store reads them.
async fn chain_start(
    store: &dyn Store,
    order: u64,
    campaign: &str,
    count: i64,
    first: DateTime<Utc>,
) -> Result<ChainStart> {
    let id = Uuid::parse_str(campaign)?;
    let record = store.campaign(id).await?.ok_or_else(|| format!("no campaign {campaign}"))?;
    let players = store.campaign_principals(id, PrincipalKind::Player, 100).await?;
    let (author, _) = players.into_iter().min_by(|(a, _), (b, _)| a.side.cmp(&b.side)).ok_or("no player")?;
    Ok(ChainStart {
        order,
        campaign: id,
        author: author.id,
        side: author.side,
        genesis: genesis(&record),
        count,
        first,
    })
}

/// The hash a campaign's first post links to, as the server's does.
fn genesis(campaign: &Campaign) -> String {
    if campaign.chain_genesis == "legacy" {
        return GENESIS.to_owned();
    }
    CreationRecord {
        campaign_id: &campaign.id.to_string(),
        name: &campaign.name,
        moderator_id: &campaign.moderator_id.to_string(),
        mode: &campaign.mode,
        scenario: campaign.scenario.as_deref(),
        scenario_text: campaign.scenario_text.as_deref(),
        ruleset: campaign.ruleset.as_deref(),
        settings: &campaign.settings,
        created_at: campaign.created_at,
    }
    .genesis()
}

impl ChainStart {
    /// The `seq`th post's request: its author's key and what was asked, hashed as the server
    /// hashes a request.
    fn request(&self, seq: u64) -> AppendRequest {
        let asked = self.body(seq as i64);
        let side = self.side.as_deref().unwrap_or("-");
        AppendRequest {
            campaign_id: self.campaign,
            author_id: self.author,
            idempotency_key: format!("seed-{seq}"),
            request_hash: hex::encode(Sha256::digest(format!("{}\nresolve\n{side}\n{asked}", self.campaign))),
            quotas: Vec::new(),
        }
    }

    /// The body of the `seq`th post, canonical JSON.
    fn body(&self, seq: i64) -> String {
        order(seq as usize, seq as u64)["body"].to_string()
    }

    /// The `resolve` post after `tail`, a millisecond after the one before, hashed and chained,
    /// and its outcome rolled from its own dice stream exactly as the server does, so the audit
    /// verifies it; `sign` makes its receipt with the server's key.
    fn decide(&self, tail: &Tail, sign: &Sign) -> std::result::Result<Decision, Declined> {
        use adjutant_rules::{resolver, DiceStream};
        let seq = tail.next_seq;
        let stamp = self.first + chrono::Duration::milliseconds(seq);
        let order = order(seq as usize, seq as u64);
        let body = order["body"].to_string();
        let prev_hash = tail.prev_hash.clone().unwrap_or_else(|| self.genesis.clone());
        let (campaign, author) = (self.campaign.to_string(), self.author.to_string());
        let hash = Link {
            prev_hash: &prev_hash,
            campaign_id: &campaign,
            seq,
            stamp,
            author_id: &author,
            side: self.side.as_deref(),
            kind: "resolve",
            body: &body,
        }
        .hash();
        let ruleset = resolver::ruleset(RULESET).ok_or(Declined)?;
        let dice = DiceStream::new(&campaign, seq as u64, stamp);
        let resolution =
            resolver::resolve(ruleset, "formation_test", &order["body"]["inputs"], dice).map_err(|_| Declined)?;
        let data = serde_json::to_value(&resolution).map_err(|_| Declined)?;
        let outcome = NewOutcome {
            id: outcome_id(self.first, self.order * self.count as u64 + seq as u64),
            kind: "resolution".to_owned(),
            data: json!({"headline": resolution.headline, "data": data}).to_string(),
        };
        let post = Post {
            campaign_id: self.campaign,
            seq,
            stamp,
            author_id: self.author,
            side: self.side.clone(),
            kind: "resolve".to_owned(),
            body,
            prev_hash,
            hash,
            receipt: None,
        };
        Ok(Decision { post, outcomes: vec![outcome], snapshot: None, sign: Some(sign.clone()) })
    }
}

fn signing_key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&BENCH_SIGNING_SEED)
}

/// The receipts' key id, as the server names its key.
fn receipt_key_id() -> String {
    format!("ed25519:{}", &hex::encode(Sha256::digest(signing_key().verifying_key().as_bytes()))[..16])
}

/// A post's receipt, signed with the server's key.
fn signer() -> Sign {
    use ed25519_dalek::Signer;
    let (key, key_id) = (signing_key(), receipt_key_id());
    Arc::new(move |post: &Post| {
        let campaign = post.campaign_id.to_string();
        let message = adjutant_rules::chain::receipt_message(&campaign, post.seq, post.stamp, &post.hash);
        Receipt { key_id: key_id.clone(), signature: hex::encode(key.sign(message.as_bytes()).to_bytes()) }
    })
}

/// The id of the `n`th outcome seeded: time-ordered (UUIDv7, the seeding's first stamp and then
/// `n`), so the seeded outcomes are appended to the end of the id index instead of all over it.
fn outcome_id(first: DateTime<Utc>, n: u64) -> Uuid {
    let mut counter = [0u8; 10];
    counter[2..].copy_from_slice(&n.to_be_bytes());
    uuid::Builder::from_unix_timestamp_millis(first.timestamp_millis() as u64, &counter).into_uuid()
}

#[cfg(test)]
mod tests {
    use adjutant_rules::DiceStream;
    use ed25519_dalek::Verifier;
    use serde_json::Value;

    use super::*;

    /// The posts `start` decides one after another, each on the tail the one before left.
    fn decided(start: &ChainStart) -> Vec<Decision> {
        let sign = signer();
        let mut tail = Tail { next_seq: 1, prev_hash: None, prev_stamp: None, snapshot: None, next_position: 1 };
        let mut decisions = Vec::new();
        for _ in 0..start.count {
            let decision = start.decide(&tail, &sign).unwrap();
            tail.next_seq += 1;
            tail.prev_hash = Some(decision.post.hash.clone());
            tail.prev_stamp = Some(decision.post.stamp);
            tail.next_position += 1;
            decisions.push(decision);
        }
        decisions
    }

    #[test]
    fn seeded_posts_chain_from_the_genesis_with_receipts_the_server_s_key_verifies() {
        let first = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let start = ChainStart {
            order: 0,
            campaign: Uuid::new_v4(),
            author: Uuid::new_v4(),
            side: Some("confederate".into()),
            genesis: "ab".repeat(32),
            count: 40,
            first,
        };
        let posts = decided(&start);
        assert_eq!(posts.len(), 40);
        let key = signing_key().verifying_key();
        let campaign = start.campaign.to_string();
        let mut prev_hash = start.genesis.clone();
        for (n, decision) in posts.iter().enumerate() {
            let post = &decision.post;
            assert_eq!(post.seq, n as i64 + 1);
            assert_eq!(post.stamp, first + chrono::Duration::milliseconds(post.seq));
            assert_eq!(post.prev_hash, prev_hash);
            let link = Link {
                prev_hash: &prev_hash,
                campaign_id: &campaign,
                seq: post.seq,
                stamp: post.stamp,
                author_id: &start.author.to_string(),
                side: Some("confederate"),
                kind: "resolve",
                body: &post.body,
            };
            assert_eq!(post.hash, link.hash());
            let receipt = (decision.sign.as_ref().unwrap())(post);
            assert_eq!(receipt.key_id, receipt_key_id());
            let message = adjutant_rules::chain::receipt_message(&campaign, post.seq, post.stamp, &post.hash);
            let signature: [u8; 64] = hex::decode(&receipt.signature).unwrap().try_into().unwrap();
            key.verify(message.as_bytes(), &ed25519_dalek::Signature::from_bytes(&signature)).unwrap();
            // The outcome is the one the post's own dice give.
            let ruleset = adjutant_rules::resolver::ruleset(RULESET).unwrap();
            let inputs: Value = serde_json::from_str::<Value>(&post.body).unwrap()["inputs"].clone();
            let dice = DiceStream::new(&campaign, post.seq as u64, post.stamp);
            let again = adjutant_rules::resolver::resolve(ruleset, "formation_test", &inputs, dice).unwrap();
            let stored: Value = serde_json::from_str(&decision.outcomes[0].data).unwrap();
            assert_eq!(stored["data"], serde_json::to_value(&again).unwrap());
            // The request is hashed as the server hashes it: campaign, kind, side, body.
            let request = start.request(post.seq as u64);
            let asked = format!("{campaign}\nresolve\nconfederate\n{}", post.body);
            assert_eq!(request.request_hash, hex::encode(Sha256::digest(asked)));
            prev_hash = post.hash.clone();
        }
        assert!(receipt_key_id().starts_with("ed25519:") && receipt_key_id().len() == 24);
        // The outcomes' ids rise with the post and with the campaign's place in the seeding.
        let ids: Vec<Uuid> = posts.iter().map(|d| d.outcomes[0].id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let next_campaign = decided(&ChainStart { order: 1, ..start });
        assert!(ids[39] < next_campaign[0].outcomes[0].id);
        assert_eq!(next_campaign[0].outcomes[0].id.get_version_num(), 7);
    }
}
