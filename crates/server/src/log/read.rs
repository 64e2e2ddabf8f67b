//! Reading the log back from the store: the fold as it stood before a post, and what a post's
//! verdict reads from further back than the tail ([`Needs`]).

use adjutant_rules::result_time::ChainSecret;
use adjutant_rules::short_acw::GameState;
use adjutant_store::{IndexedOutcomeKind, IndexedPostKind, Post, Store};
use uuid::Uuid;

use super::decide::Needs;
use super::error::{LogError, LogResult};
use super::kinds::PostKind;
use super::view::{LogView, VoidSet};
use crate::campaign::LoadedCampaign;

/// The fold of the campaign's log before post `before` (`i64::MAX`: all of it). Reads only the
/// posts that change the view (rollbacks and seals), so it costs what they number.
pub async fn view_before(store: &dyn Store, campaign_id: Uuid, before: i64) -> LogResult<LogView> {
    view_of(store, campaign_id, before, &LogView::KINDS).await
}

/// The fold of the posts of `kinds` before post `before`: with rollbacks only, the void posts
/// and no seals, for a reader that shows no sealed choice.
pub async fn view_of(
    store: &dyn Store,
    campaign_id: Uuid,
    before: i64,
    kinds: &[IndexedPostKind],
) -> LogResult<LogView> {
    let mut posts: Vec<Post> = Vec::new();
    for kind in kinds {
        posts.extend(store.posts_of_kind(campaign_id, *kind).await?.into_iter().filter(|p| p.seq < before));
    }
    posts.sort_by_key(|p| p.seq);
    Ok(LogView::of(&posts))
}

/// The fold a reader of `posts` needs: the seals only when one of them is a seal (to hide it
/// until both choices are in).
pub async fn view_for(store: &dyn Store, campaign_id: Uuid, posts: &[Post]) -> LogResult<LogView> {
    let seal = posts.iter().any(|p| PostKind::of(&p.kind) == PostKind::Seal);
    view_of(store, campaign_id, i64::MAX, if seal { &LogView::KINDS } else { &[IndexedPostKind::Rollback] }).await
}

/// The `deploy` post whose body every reader is kept from now, in a campaign that seals
/// deployments (`view::sealed_deployment`); reads the campaign's deployments only, and nothing
/// where deployments are open.
pub async fn sealed_deployment(store: &dyn Store, campaign: &LoadedCampaign, void: &VoidSet) -> LogResult<Option<i64>> {
    if !campaign.seals_deployment() {
        return Ok(None);
    }
    let deploys = store.posts_of_kind(campaign.campaign.id, IndexedPostKind::Deploy).await?;
    Ok(super::view::sealed_deployment(&deploys, void))
}

/// The post kind of a deployment.
pub const DEPLOY: &str = IndexedPostKind::Deploy.as_str();

/// The posts the campaign's rollbacks made void, now. Reads the rollbacks only.
pub async fn void_posts(store: &dyn Store, campaign_id: Uuid) -> LogResult<VoidSet> {
    Ok(view_of(store, campaign_id, i64::MAX, &[IndexedPostKind::Rollback]).await?.void().clone())
}

/// A managed game's state after the log's last post, and that post (0: none yet).
pub async fn state_now(store: &dyn Store, campaign: &LoadedCampaign) -> LogResult<(i64, GameState)> {
    let id = campaign.campaign.id;
    let last = store.head(id).await?.map_or(0, |post| post.seq);
    let snapshot = store.snapshot_at(id, last).await?;
    let game = campaign
        .state_from(snapshot.as_ref().map(|(_, text)| text.as_str()))?
        .ok_or_else(|| LogError::Broken(format!("campaign {id} has no game state: it is not a managed campaign")))?;
    Ok((last, game))
}

/// What a post's verdict reads besides the tail, as read from the store.
#[derive(Debug, Default)]
pub struct ReadContext {
    pub view: LogView,
    pub rollback_snapshot: Option<(i64, String)>,
    pub chain_secret: Option<ChainSecret>,
}

impl ReadContext {
    /// The context a post that `needs` it reads, with the log as it stands before post
    /// `before`; `chain_secret` gives the sealed-delay secret when [`Needs`] asks for it (the
    /// server's next one for a new post, the revealed one for a stored post).
    pub async fn read(
        store: &dyn Store,
        campaign: &LoadedCampaign,
        needs: Needs,
        before: i64,
        chain_secret: impl std::future::Future<Output = LogResult<Option<ChainSecret>>>,
    ) -> LogResult<Self> {
        let id = campaign.campaign.id;
        let view = if needs.view { view_before(store, id, before).await? } else { LogView::default() };
        let rollback_snapshot = match needs.rollback_snapshot {
            Some(to_seq) => store.snapshot_at(id, to_seq).await?,
            None => None,
        };
        let chain_secret = if needs.chain_secret { chain_secret.await? } else { None };
        Ok(Self { view, rollback_snapshot, chain_secret })
    }

    /// Lent to `decide`.
    pub fn context(&self) -> super::decide::Context<'_> {
        super::decide::Context {
            view: &self.view,
            rollback_snapshot: self.rollback_snapshot.as_ref(),
            chain_secret: self.chain_secret.as_ref(),
        }
    }
}

/// A player turn as the log records it: its number, its side, and the post that began it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerTurn {
    pub turn: u32,
    pub side: adjutant_rules::Side,
    /// The post whose outcomes began it (an end of turn, or the deployment that ended deployment).
    pub began_after: i64,
}

/// The most turn beginnings read: far more than a campaign of any length has, voided ones
/// included, so reading them is bounded work.
pub const TURNS_READ: i64 = 2000;

/// The player turns begun in the log as it stood after post `until`, in order. Beginnings that a
/// rollback (made by then) voided are left out, and a turn begun again stands where it began last.
pub async fn player_turns(store: &dyn Store, campaign_id: Uuid, until: i64) -> LogResult<Vec<PlayerTurn>> {
    use adjutant_rules::outcome::OutcomeData;
    let void = view_of(store, campaign_id, until.saturating_add(1), &[IndexedPostKind::Rollback]).await?.void().clone();
    let mut turns: Vec<PlayerTurn> = Vec::new();
    for o in store.outcomes_of_kind(campaign_id, IndexedOutcomeKind::TurnBegins, TURNS_READ).await? {
        if o.seq > until || void.contains(&o.seq) {
            continue;
        }
        let stored: serde_json::Value = serde_json::from_str(&o.data).unwrap_or_default();
        let Ok(OutcomeData::TurnBegins(begun)) = OutcomeData::read(&o.kind, &stored["data"]) else { continue };
        turns.retain(|t| !(t.turn == begun.turn && t.side == begun.side));
        turns.push(PlayerTurn { turn: begun.turn, side: begun.side, began_after: o.seq });
    }
    Ok(turns)
}
