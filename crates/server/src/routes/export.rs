//! The witnesses outside the database: the server's public keys, and a campaign's whole log as
//! JSON Lines for `adjutant verify`.

use std::collections::VecDeque;

use adjutant_rules::dice::stamp_text;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::error::ApiResult;
use crate::export::{
    CampaignRecord, EndRecord, ErrorRecord, ExportHeader, Line, OutcomeRecord, PostRecord, ReceiptRecord,
    SnapshotRecord, FORMAT,
};
use crate::extract::ApiPath;
use crate::routes::shared::load_campaign;
use crate::shares::all_in_use;
use crate::signing::PublicKey;
use crate::AppState;

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct KeyList {
    /// The key signing new receipts first, then retired keys (they verify older receipts).
    pub keys: Vec<PublicKey>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_keys)).routes(routes!(export_campaign))
}

/// The server's public keys: every post's receipt is an Ed25519 signature by one of them.
#[utoipa::path(get, path = "/v1/keys", tag = "audit", responses((status = 200, body = KeyList)))]
pub async fn list_keys(State(state): State<AppState>) -> Json<KeyList> {
    Json(KeyList { keys: state.keys.public_keys() })
}

/// Posts read per page while exporting: what the export holds in memory at once.
const PAGE: i64 = 200;
/// An export whose reader takes no line for this long is abandoned, and its permit freed. (A
/// reader that takes its lines, but too slowly, is cut off by the connection's minimum send rate,
/// `min_send_bytes_per_sec`, which frees the permit too.)
const STALL: std::time::Duration = std::time::Duration::from_secs(30);

/// Hands a line to the client's side of the export, unless it has stopped reading.
async fn send(tx: &tokio::sync::mpsc::Sender<String>, text: String) -> Result<(), String> {
    send_within(tx, text, STALL).await
}

async fn send_within(
    tx: &tokio::sync::mpsc::Sender<String>,
    text: String,
    stall: std::time::Duration,
) -> Result<(), String> {
    match tokio::time::timeout(stall, tx.send(text)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err("the client went away".into()),
        Err(_) => Err("the client stopped reading".into()),
    }
}

/// The whole campaign as JSON Lines, streamed: the creation record, every post with its
/// receipt, every outcome and state snapshot (rollbacks are posts). Public data only: a sealed
/// choice whose topic is not revealed has `body: null`, and so has a deployment sealed until the
/// other side has deployed (rules version 3), whose state snapshots and those after it are left
/// out until then. Check it offline with
/// `adjutant verify FILE --key PUBKEY`. Counts as an expensive read.
#[utoipa::path(get, path = "/v1/campaigns/{id}/export", tag = "audit",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, description = "JSON Lines, one object a line with a `type`: `export` (format `adjutant-export-v1`, the server's public keys), `campaign` (the creation record, `chain_genesis`, `genesis_hash`), then per post `post` (`body` is the exact text hashed, `receipt`), its `outcome`s (`data` the exact text stored) and its `snapshot`, and last `end` (`posts`, `head_hash`); `error` when the server could not finish",
               content_type = "application/x-ndjson", body = String),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 429, body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, description = "every export the server writes at once is being written (`rule`: `export.all_busy`, `max_exports`, default 16), with `Retry-After`; or the database is unreachable; retry later", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn export_campaign(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let Ok(permit) = state.exports.clone().try_acquire_owned() else {
        return Ok(all_in_use(
            "export.all_busy",
            format!(
                "every export this server writes at once ({}) is being written; try again in a minute",
                state.config.max_exports.max(1)
            ),
            60,
        ));
    };
    let log = crate::log::read::view_before(&*state.store, id, i64::MAX).await?;
    let sealed = crate::log::read::sealed_deployment(&*state.store, &campaign, log.void()).await?;
    let c = &campaign.campaign;
    let head = vec![
        Line::Export(ExportHeader {
            format: FORMAT.into(),
            exported_at: stamp_text(state.clock.now()),
            keys: state.keys.public_keys(),
        }),
        Line::Campaign(CampaignRecord {
            id: c.id,
            name: c.name.clone(),
            moderator_id: c.moderator_id,
            mode: c.mode.clone(),
            scenario: c.scenario.clone(),
            scenario_text: c.scenario_text.clone(),
            ruleset: c.ruleset.clone(),
            settings: c.settings.clone(),
            created_at: stamp_text(c.created_at),
            chain_genesis: c.chain_genesis.clone(),
            genesis_hash: crate::campaign::genesis(c),
        }),
    ];
    // A small channel: the reader waits for the client, so memory stays at a page or two.
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(4);
    tokio::spawn(async move {
        let _permit = permit;
        for line in &head {
            if send(&tx, line_text(line)).await.is_err() {
                return;
            }
        }
        let end = match write_log(&state, id, &log, sealed, &tx).await {
            Ok(end) => Line::End(end),
            Err(Stop::Reader) => return,
            Err(Stop::Store(e)) => {
                tracing::warn!(campaign = %id, error = %e, "an export stopped: the log could not be read");
                Line::Error(ErrorRecord { detail: "the export stopped: the log could not be read; try again".into() })
            }
        };
        let _ = send(&tx, line_text(&end)).await;
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|text| (Ok::<_, std::convert::Infallible>(text), rx))
    });
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(stream)).into_response())
}

fn line_text(line: &Line) -> String {
    let mut text = serde_json::to_string(line).unwrap_or_else(|e| format!("{{\"type\":\"error\",\"detail\":\"{e}\"}}"));
    text.push('\n');
    text
}

/// Sends every post with its outcomes and snapshot, a page at a time.
/// Why an export stopped before its end line.
enum Stop {
    /// The client went away or stopped reading: nothing more to say.
    Reader,
    /// The store could not be read: logged, and the client told so in general words.
    Store(String),
}

async fn write_log(
    state: &AppState,
    id: Uuid,
    log: &crate::log::view::LogView,
    sealed_deployment: Option<i64>,
    tx: &tokio::sync::mpsc::Sender<String>,
) -> Result<EndRecord, Stop> {
    let store = &state.store;
    let (mut after, mut outcomes_after, mut snapshots_after) = (0, 0, 0);
    let mut outcomes: VecDeque<adjutant_store::Outcome> = VecDeque::new();
    let mut snapshots: VecDeque<(i64, String)> = VecDeque::new();
    let (mut outcomes_done, mut snapshots_done) = (false, false);
    let mut end = EndRecord { posts: 0, head_hash: None };
    loop {
        let posts = store.posts(id, after, PAGE).await.map_err(|e| Stop::Store(e.to_string()))?;
        let Some(last) = posts.last() else { break };
        after = last.seq;
        while !outcomes_done && outcomes.back().is_none_or(|o| o.seq <= after) {
            let page = store.outcomes(id, outcomes_after, PAGE).await.map_err(|e| Stop::Store(e.to_string()))?;
            outcomes_done = (page.len() as i64) < PAGE;
            let Some(last) = page.last() else { break };
            outcomes_after = last.position;
            outcomes.extend(page);
        }
        while !snapshots_done && snapshots.back().is_none_or(|(seq, _)| *seq <= after) {
            let page = store.snapshots(id, snapshots_after, PAGE).await.map_err(|e| Stop::Store(e.to_string()))?;
            snapshots_done = (page.len() as i64) < PAGE;
            let Some((last, _)) = page.last() else { break };
            snapshots_after = *last;
            snapshots.extend(page);
        }
        for post in &posts {
            let hidden =
                log.hides(&post.kind, &crate::log::view::body_value(post)) || Some(post.seq) == sealed_deployment;
            let mut lines = vec![Line::Post(PostRecord {
                seq: post.seq,
                stamp: stamp_text(post.stamp),
                author_id: post.author_id,
                side: post.side.clone(),
                kind: post.kind.clone(),
                body: (!hidden).then(|| post.body.clone()),
                sealed: hidden,
                prev_hash: post.prev_hash.clone(),
                hash: post.hash.clone(),
                receipt: post
                    .receipt
                    .as_ref()
                    .map(|r| ReceiptRecord { key_id: r.key_id.clone(), signature: r.signature.clone() }),
            })];
            while outcomes.front().is_some_and(|o| o.seq <= post.seq) {
                if let Some(o) = outcomes.pop_front() {
                    lines.push(Line::Outcome(OutcomeRecord {
                        id: o.id,
                        position: o.position,
                        seq: o.seq,
                        kind: o.kind,
                        data: o.data,
                    }));
                }
            }
            while snapshots.front().is_some_and(|(seq, _)| *seq <= post.seq) {
                if let Some((seq, state)) = snapshots.pop_front() {
                    // From a sealed deployment on, every state holds it: none is exported.
                    if sealed_deployment.is_none_or(|sealed| seq < sealed) {
                        lines.push(Line::Snapshot(SnapshotRecord { seq, state }));
                    }
                }
            }
            for line in &lines {
                send(tx, line_text(line)).await.map_err(|_| Stop::Reader)?;
            }
            end.posts += 1;
            end.head_hash = Some(post.hash.clone());
        }
    }
    // Whatever is stored beyond the last post goes out too: the verifier reports it.
    loop {
        for o in outcomes.drain(..) {
            let line =
                Line::Outcome(OutcomeRecord { id: o.id, position: o.position, seq: o.seq, kind: o.kind, data: o.data });
            send(tx, line_text(&line)).await.map_err(|_| Stop::Reader)?;
        }
        if outcomes_done {
            break;
        }
        let page = store.outcomes(id, outcomes_after, PAGE).await.map_err(|e| Stop::Store(e.to_string()))?;
        outcomes_done = (page.len() as i64) < PAGE;
        let Some(last) = page.last() else { break };
        outcomes_after = last.position;
        outcomes.extend(page);
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::send_within;
    use std::time::Duration;

    #[tokio::test]
    async fn an_export_whose_reader_stops_reading_is_abandoned() {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(1);
        let stall = Duration::from_millis(20);
        assert_eq!(send_within(&tx, "one\n".into(), stall).await, Ok(()));
        // Nobody reads: the next line waits no longer than the stall, and the export ends.
        assert_eq!(send_within(&tx, "two\n".into(), stall).await, Err("the client stopped reading".into()));
        assert_eq!(rx.recv().await.as_deref(), Some("one\n"));
        drop(rx);
        assert_eq!(send_within(&tx, "three\n".into(), stall).await, Err("the client went away".into()));
    }
}
