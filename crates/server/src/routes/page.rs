//! The campaign's web page: the map, whose turn it is, and the log with every result number and
//! its audit. Served by the binary itself from a template (`assets/campaign.html`, escaping by
//! default) and the stylesheet every page shares; a few lines of script, no build step, readable
//! on a phone.

use adjutant_rules::dice::stamp_text;
use adjutant_rules::outcome::OutcomeData;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use minijinja::context;
use minijinja::value::Serde;
use serde::Serialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

use crate::campaign::{Game, LoadedCampaign};
use crate::error::ApiResult;
use crate::extract::ApiPath;
use crate::routes::play::{asset, render, JAVASCRIPT};
use crate::routes::shared::load_campaign;
use crate::views::{stamp_numbers, StoredOutcome};
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/campaigns/{id}", get(campaign_page))
        .route("/assets/page.js", get(|| asset(JAVASCRIPT, include_str!("../../assets/page.js"))))
        // The turn-by-turn history, shared by the public page and the player's page.
        .route("/assets/history.js", get(|| asset(JAVASCRIPT, include_str!("../../assets/history.js"))))
        .route("/console/editor", get(|| async { crate::routes::play::html_page(EDITOR_HTML.to_owned()) }))
        .route("/assets/editor.js", get(|| asset(JAVASCRIPT, include_str!("../../assets/editor.js"))))
}

/// The moderator's map editor: a page of its own, all its work done by its script.
const EDITOR_HTML: &str = include_str!("../../assets/editor.html");

/// The page shows at most this many of the latest posts.
const SHOWN: i64 = 200;

/// Whose turn it is in a managed campaign, as the page words it.
#[derive(Serialize)]
struct TurnLine {
    /// The game is over: how it ended.
    over: Option<String>,
    deployment: bool,
    turn: String,
    phase: String,
    side_to_act: String,
    awaiting: Vec<Awaited>,
    points_union: String,
    points_confederate: String,
}

#[derive(Serialize)]
struct Awaited {
    side: String,
    detail: String,
}

/// The campaign clock's line, counted down by the page's script from the server's own clock.
#[derive(Serialize)]
struct ClockLine {
    status: String,
    now: String,
    /// The next deadline (RFC 3339), empty when none runs.
    due: String,
    summary: String,
}

/// The map at the start of a player turn.
#[derive(Serialize)]
struct TurnMap {
    turn: u64,
    side: String,
    seq: i64,
}

/// One post of the log.
#[derive(Serialize)]
struct PostLine {
    seq: i64,
    void: bool,
    side: String,
    author: String,
    kind: String,
    stamp: String,
    time_of_day: String,
    /// Where the post decided a battle: its stamp's result number.
    battle: Option<BattleNumber>,
    outcomes: Vec<OutcomeLine>,
}

#[derive(Serialize)]
struct BattleNumber {
    /// The battle's own number comes after a sealed delay, shown with its outcome.
    sealed: bool,
    result: String,
    n: u32,
    sqrt: String,
}

#[derive(Serialize)]
struct OutcomeLine {
    kind: String,
    headline: String,
    sealed_delay: Option<SealedDelayLine>,
}

/// A sealed-delay battle: the stamp, the delay, the result time and its result number.
#[derive(Serialize)]
struct SealedDelayLine {
    stamp: String,
    delay_ms: u64,
    result_time: String,
    time_of_day: String,
    result: String,
    n: u32,
    sqrt: String,
    draw: u64,
    secret: String,
}

async fn campaign_page(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let c = &campaign.campaign;
    let what = match &campaign.game {
        Game::Managed { scenario, .. } => format!("Managed campaign · {}", scenario.title),
        Game::Resolver { ruleset, .. } => format!("Resolver campaign · {}", ruleset.title()),
    };

    let (mut turn, mut clock_line, mut stand_in_map, mut history) = (None, None, None, Vec::new());
    if let Some(scenario) = campaign.scenario() {
        stand_in_map = scenario.stand_in_map().map(str::to_owned);
        let (_, game) = crate::log::read::state_now(&*state.store, &campaign).await?;
        let clock = crate::views::ClockView::of(&campaign, &game, state.clock.now());
        let game = serde_json::to_value(&game).unwrap_or(Value::Null);
        turn = Some(turn_line(&game));
        clock_line = clock.map(|clock| ClockLine {
            due: clock.waits.iter().filter_map(|w| w.due.clone()).min().unwrap_or_default(),
            status: clock.status,
            now: clock.now,
            summary: clock.summary,
        });
        history = turn_history(&state, id).await?;
    }

    // The latest posts, newest first.
    let total = last_seq(&state, id).await?;
    let from = (total - SHOWN).max(0);
    let posts = state.store.posts(id, from, SHOWN).await?;
    let void = crate::log::read::void_posts(&*state.store, id).await?;
    let through = posts.last().map_or(from, |p| p.seq);
    let authors = crate::routes::shared::authors(&state, id).await?;
    let mut outcomes_by_post =
        adjutant_store::outcomes_by_post(state.store.outcomes_of_posts(id, from, through).await?);
    let posts: Vec<PostLine> = posts
        .iter()
        .rev()
        .map(|post| {
            let numbers = stamp_numbers(&campaign, post.stamp);
            let outcomes = outcomes_by_post.remove(&post.seq).unwrap_or_default();
            // A post's result number is shown where it decided a battle, and nowhere else.
            let battle = outcomes.iter().find_map(|o| match StoredOutcome::of(o).typed(&o.kind) {
                Some(OutcomeData::Battle(fought)) => Some(BattleNumber {
                    sealed: fought.sealed_delay.is_some(),
                    result: format!("{:02}", numbers.result_number.result),
                    n: numbers.result_number.n,
                    sqrt: numbers.result_number.sqrt.clone(),
                }),
                _ => None,
            });
            PostLine {
                seq: post.seq,
                void: void.contains(&post.seq),
                side: post.side.as_deref().unwrap_or("moderator").to_owned(),
                author: authors.name(post.author_id, &post.kind).to_owned(),
                kind: post.kind.clone(),
                stamp: stamp_text(post.stamp),
                time_of_day: numbers.time_of_day,
                battle,
                outcomes: outcomes
                    .iter()
                    .map(|o| {
                        let stored = StoredOutcome::of(o);
                        OutcomeLine {
                            sealed_delay: sealed_delay_line(&campaign, &stored.data_value()),
                            kind: o.kind.clone(),
                            headline: stored.headline,
                        }
                    })
                    .collect(),
            }
        })
        .collect();

    render(
        "campaign.html",
        context! {
            id => id.to_string(),
            name => c.name.clone(),
            what => what,
            time_zone => campaign.settings.time_zone.clone(),
            clock => campaign.settings.clock.to_string(),
            first_digit => campaign.settings.first_digit,
            chain => campaign.settings.result_chain.as_ref().map(|chain| context! {
                commitment => chain.commitment.clone(),
                length => chain.length,
            }),
            stand_in_map => stand_in_map,
            turn => minijinja::Value::from(Serde(&turn)),
            clock_line => minijinja::Value::from(Serde(&clock_line)),
            history => minijinja::Value::from(Serde(&history)),
            total => total,
            posts => minijinja::Value::from(Serde(&posts)),
        },
    )
}

/// For a sealed-delay battle: the stamp, the delay, the result time and its result number.
fn sealed_delay_line(campaign: &LoadedCampaign, data: &Value) -> Option<SealedDelayLine> {
    let sealed = data
        .get("sealed_delay")
        .and_then(|v| serde_json::from_value::<adjutant_rules::result_time::SealedDelay>(v.clone()).ok())?;
    let result_time = sealed.result_time()?;
    let numbers = stamp_numbers(campaign, result_time);
    Some(SealedDelayLine {
        stamp: sealed.stamp,
        delay_ms: sealed.delay_ms,
        result_time: sealed.result_time,
        time_of_day: numbers.time_of_day,
        result: format!("{:02}", numbers.result_number.result),
        n: numbers.result_number.n,
        sqrt: numbers.result_number.sqrt,
        draw: sealed.draw,
        secret: sealed.secret,
    })
}

/// The map at the start of each player turn so far (the turns a rollback voided left out): the
/// page's script shows the one picked in place of the map.
async fn turn_history(state: &AppState, id: Uuid) -> ApiResult<Vec<TurnMap>> {
    let turns = crate::log::read::player_turns(&*state.store, id, i64::MAX).await?;
    Ok(turns
        .into_iter()
        .map(|t| TurnMap { turn: u64::from(t.turn), side: t.side.key().to_owned(), seq: t.began_after })
        .collect())
}

async fn last_seq(state: &AppState, id: Uuid) -> ApiResult<i64> {
    Ok(state.store.head(id).await?.map_or(0, |post| post.seq))
}

fn turn_line(game: &Value) -> TurnLine {
    let side_name = |s: &Value| match s.as_str() {
        Some("union") => "the Union".to_owned(),
        Some("confederate") => "the Rebels".to_owned(),
        _ => "—".to_owned(),
    };
    let points = &game["reinforcement_points"];
    TurnLine {
        over: game
            .get("result")
            .filter(|r| !r.is_null())
            .map(|result| result["condition"].as_str().unwrap_or_default().to_owned()),
        deployment: game["phase"].as_str() == Some("deployment"),
        turn: game["turn"].to_string(),
        phase: game["phase"].as_str().unwrap_or_default().to_owned(),
        side_to_act: side_name(&game["side_to_act"]),
        awaiting: game["awaiting"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| Awaited {
                side: side_name(&a["side"]),
                detail: a["detail"].as_str().unwrap_or_default().to_owned(),
            })
            .collect(),
        points_union: points["union"].to_string(),
        points_confederate: points["confederate"].to_string(),
    }
}
