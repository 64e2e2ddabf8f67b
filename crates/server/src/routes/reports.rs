//! The audits and the fairness report as pages a moderator reads, from the same working as the
//! API's JSON (which stays at `/v1/…`): the whole-campaign audit, a post's audit with each
//! number's recomputation, and the fairness report with the server's pictures of it. The
//! templates escape every value; only the pictures, which the server draws from numbers, are
//! set as markup.

use adjutant_render::charts::{counts_against_even, wins_against_expected};
use adjutant_render::{outcome_working, Stored, Working};
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use minijinja::value::Serde;
use minijinja::{context, Value};
use serde::Serialize;
use uuid::Uuid;

use utoipa_axum::router::OpenApiRouter;

use crate::error::{ApiResult, AppError};
use crate::extract::ApiPath;
use crate::routes::fairness::FairnessReport;
use crate::routes::play::render;
use crate::routes::shared::{load_campaign, load_post};
use crate::views::{ReceiptView, StoredOutcome};
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/campaigns/{id}/audit", get(campaign_audit_page))
        .route("/campaigns/{id}/posts/{seq}/audit", get(post_audit_page))
        .route("/campaigns/{id}/fairness", get(fairness_page))
}

/// The whole-campaign audit, going on from what this server verified before (as the API's
/// audit without `fresh`): every post replayed, every difference named with its post.
async fn campaign_audit_page(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let audit = crate::routes::audit::audit_incrementally(&state, &campaign, false).await?;
    render(
        "audit.html",
        context! {
            id => id.to_string(),
            name => campaign.campaign.name.clone(),
            audit => Value::from(Serde(&audit)),
        },
    )
}

/// One outcome of a post with its working in words.
#[derive(Serialize)]
struct Decided {
    kind: String,
    headline: String,
    working: Working,
}

/// A post's audit: the time stamp's numbers step by step, what the post decided with every
/// number's working (a battle's victory fraction, band, basic rate and casualties), the dice
/// stream, the hash chain and the receipt.
async fn post_audit_page(
    State(state): State<AppState>,
    ApiPath((id, seq)): ApiPath<(Uuid, i64)>,
) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let (post, outcomes) = load_post(&state, &campaign, seq).await?;
    let audit = crate::routes::audit::audit_of(&state, &campaign, &post, &outcomes, false).await?;
    let decided: Vec<Decided> = outcomes
        .iter()
        .map(|o| {
            let stored = StoredOutcome::of(o);
            Decided {
                working: outcome_working(&o.kind, Stored::Json(stored.data.get())),
                kind: o.kind.clone(),
                headline: stored.headline,
            }
        })
        .collect();
    let battle = decided.iter().any(|d| d.kind == "battle");
    render(
        "post-audit.html",
        context! {
            id => id.to_string(),
            name => campaign.campaign.name.clone(),
            seq => seq,
            kind => post.kind.clone(),
            side => post.side.clone().unwrap_or_else(|| "moderator".into()),
            audit => Value::from(Serde(&audit)),
            decided => Value::from(Serde(&decided)),
            battle => battle,
            receipt => Value::from(Serde(ReceiptView::of(&post))),
        },
    )
}

/// A picture drawn by the server from numbers, set in the page as markup.
fn picture(svg: String) -> Value {
    Value::from_safe_string(svg)
}

/// One side's part of the fairness page.
#[derive(Serialize)]
struct SideFairness {
    side: String,
    wins: String,
    wins_verdict: String,
    spread_verdict: String,
    timing_verdict: String,
}

/// The fairness report as pictures and plain sentences.
async fn fairness_page(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let bytes = crate::routes::fairness::fairness_json(&state, &campaign).await?;
    let report: FairnessReport = serde_json::from_slice(&bytes).map_err(|e| AppError::Internal(e.to_string()))?;
    let side_name = |side: &str| match side {
        "union" => "the Union".to_owned(),
        "confederate" => "the Rebels".to_owned(),
        other => other.to_owned(),
    };
    let sides: Vec<SideFairness> = report
        .players
        .iter()
        .map(|p| {
            let w = &p.attacker_wins;
            SideFairness {
                side: side_name(&p.player),
                wins: wins_against_expected(
                    &side_name(&p.player),
                    w.attacks,
                    w.observed,
                    w.expected,
                    w.standard_deviation,
                ),
                wins_verdict: w.verdict.clone(),
                spread_verdict: p.result_spread.verdict.clone(),
                timing_verdict: p.post_timing.verdict.clone(),
            }
        })
        .collect();
    let wins: Vec<Value> = sides.iter().map(|s| picture(s.wins.clone())).collect();
    // The result numbers by tens, and the posts by second of the minute with the busiest marked.
    let spread = &report.result_spread;
    let mut tens = vec![0u64; 10];
    for (n, count) in spread.by_number.counts.iter().enumerate() {
        tens[(n / 10).min(9)] += count;
    }
    let tens_labels: Vec<String> = (0..10).map(|t| format!("{}–{}", t * 10, t * 10 + 9)).collect();
    let results =
        counts_against_even("Result numbers, by tens", &tens_labels, &tens, spread.by_number.total as f64 / 10.0, &[]);
    let timing = &report.post_timing;
    let seconds: Vec<String> = (0..60).map(|s| format!(":{s:02}")).collect();
    let busiest: Vec<usize> = timing.busiest_seconds.iter().map(|b| b.second as usize).collect();
    let by_second = counts_against_even(
        "Posts by second of the minute (busiest marked)",
        &seconds,
        &timing.by_second.counts,
        timing.by_second.expected_per_cell,
        &busiest,
    );
    let mod6: Vec<String> = (0..6).map(|m| m.to_string()).collect();
    let by_mod_6 = counts_against_even(
        "Posts by millisecond mod 6 (the Rebel reinforcement roll)",
        &mod6,
        &timing.by_millisecond_mod_6.counts,
        timing.by_millisecond_mod_6.expected_per_cell,
        &[],
    );
    render(
        "fairness.html",
        context! {
            id => id.to_string(),
            name => campaign.campaign.name.clone(),
            report => Value::from(Serde(&report)),
            meaning => meaning(&report),
            sides => Value::from(Serde(&sides)),
            wins => wins,
            results => picture(results),
            by_second => picture(by_second),
            by_mod_6 => picture(by_mod_6),
        },
    )
}

/// What the report means, in one plain sentence or two.
fn meaning(report: &FairnessReport) -> String {
    if report.battles == 0 {
        return "No battle has been fought yet: there is nothing to judge. The posts' timing is shown below.".into();
    }
    let worth_a_look: Vec<String> = report
        .players
        .iter()
        .flat_map(|p| [&p.attacker_wins.verdict, &p.post_timing.verdict])
        .chain([&report.result_spread.verdict, &report.post_timing.verdict])
        .filter(|v| v.contains("worth a look") || v.contains("look closely") || v.contains("a little unusual"))
        .cloned()
        .collect();
    let battles = if report.battles == 1 { "1 battle".to_owned() } else { format!("{} battles", report.battles) };
    if worth_a_look.is_empty() {
        format!(
            "In {battles}, nothing stands out: each side won about as often as its victory numbers promised, and neither result numbers nor posting times bunch more than chance would."
        )
    } else {
        format!("In {battles}, something stands out and is worth a moderator's look: {}.", worth_a_look.join("; "))
    }
}
