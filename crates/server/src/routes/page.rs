//! The campaign's web page: the map, whose turn it is, and the log with every result number and
//! its audit. Served by the binary itself; plain HTML and a few lines of script, no build step,
//! readable on a phone.

use adjutant_rules::dice::stamp_text;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use uuid::Uuid;

use utoipa_axum::router::OpenApiRouter;

use crate::campaign::Game;
use crate::error::ApiResult;
use crate::extract::ApiPath;
use crate::log::kinds::OutcomeKind;
use crate::routes::shared::load_campaign;
use crate::views::{stamp_numbers, OutcomeView};
use crate::AppState;

/// Escapes text for HTML (the same rules as the map's SVG text).
pub use adjutant_render::map::escape;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/campaigns/{id}", get(campaign_page))
        .route("/assets/page.css", get(stylesheet))
        .route("/assets/page.js", get(script))
}

const CSS: &str = include_str!("page.css");

async fn script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        include_str!("../../assets/page.js"),
    )
        .into_response()
}

async fn stylesheet() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "public, max-age=300")], CSS)
        .into_response()
}

/// The page shows at most this many of the latest posts.
const SHOWN: i64 = 200;

async fn campaign_page(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let c = &campaign.campaign;
    let mut html = String::new();
    let title = escape(&c.name);
    let what = match &campaign.game {
        Game::Managed { scenario, .. } => format!("Managed campaign · {}", escape(&scenario.title)),
        Game::Resolver { ruleset, .. } => format!("Resolver campaign · {}", escape(ruleset.title())),
    };
    html.push_str(&format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} — Adjutant</title><link rel=\"stylesheet\" href=\"/assets/page.css\"></head>\
         <body data-campaign=\"{id}\"><header><h1>{title}</h1><p class=\"what\">{what} · clock {} ({}), decimals {}–{} of √N{}</p></header><main>",
        escape(&campaign.settings.time_zone),
        campaign.settings.clock,
        campaign.settings.first_digit,
        campaign.settings.first_digit + 1,
        match &campaign.settings.result_chain {
            Some(chain) => format!(
                " · result time: the stamp plus a sealed delay (<span id=\"result-chain\">hash chain s_0 <code>{}</code>, {} secrets</span>)",
                escape(&chain.commitment),
                chain.length
            ),
            None => String::new(),
        },
    ));

    if let Some(scenario) = campaign.scenario() {
        if let Some(label) = scenario.stand_in_map() {
            html.push_str(&format!("<p class=\"stand-in\" id=\"stand-in-map\">{}</p>", escape(label)));
        }
        let (_, game) = crate::log::read::state_now(&*state.store, &campaign).await?;
        let clock = crate::views::ClockView::of(&campaign, &game, state.clock.now());
        let game = serde_json::to_value(&game).unwrap_or(Value::Null);
        html.push_str("<section id=\"turn\"><h2>Whose turn</h2>");
        html.push_str(&turn_summary(&game));
        // The campaign clock: who holds the game up and until when, counted down by the page's
        // script from the server's own clock.
        if let Some(clock) = &clock {
            let next = clock.waits.iter().filter_map(|w| w.due.as_deref()).min().unwrap_or_default();
            html.push_str(&format!(
                "<p class=\"clock-line\" id=\"clock-line\" data-status=\"{}\" data-now=\"{}\" data-due=\"{}\">{}</p>",
                escape(&clock.status),
                escape(&clock.now),
                escape(next),
                escape(&clock.summary)
            ));
        }
        html.push_str("</section>");
        html.push_str(&format!(
            "<section id=\"map\"><h2>Map</h2><a href=\"/v1/campaigns/{id}/map.svg\" id=\"map-link\">\
             <img id=\"map-picture\" src=\"/v1/campaigns/{id}/map.svg\" alt=\"The campaign map: terrain, cities with their controller, units with their factors, the last turn's moves and battles\" width=\"100%\"></a>\
             <p class=\"links\"><a href=\"/v1/campaigns/{id}/map.png\">PNG</a> · <a href=\"/v1/campaigns/{id}/state\">state (JSON)</a></p>"
        ));
        html.push_str(&turn_history(&state, id).await?);
        html.push_str("</section>");
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
    html.push_str(&format!(
        "<section id=\"log\"><h2>The log</h2><p id=\"audit-status\" class=\"pending\">Checking every number…</p>\
         <p class=\"links\">{total} posts · <a href=\"/campaigns/{id}/audit\">audit of the whole campaign</a> · \
         <a href=\"/campaigns/{id}/fairness\">fairness report</a> · \
         <a href=\"/v1/campaigns/{id}/outcomes\">outcome feed</a> · <a href=\"/v1/campaigns/{id}/posts\">posts (JSON)</a></p><ol class=\"posts\" reversed>"
    ));
    for post in posts.iter().rev() {
        let numbers = stamp_numbers(&campaign, post.stamp);
        let outcomes = outcomes_by_post.remove(&post.seq).unwrap_or_default();
        let is_void = void.contains(&post.seq);
        let side = post.side.as_deref().unwrap_or("moderator");
        // A post's result number is shown where it decided a battle, and nowhere else.
        let battle = outcomes.iter().find(|o| OutcomeKind::of(&o.kind) == OutcomeKind::Battle);
        let result_number = match battle {
            Some(o) => format!(
                " → {label} <b class=\"result\">{result:02}</b> <span class=\"sqrt\">(√{n} = {sqrt})</span>",
                label = if o.data.contains("\"sealed_delay\"") {
                    "the stamp's own number (the battle's, after the sealed delay, is below)"
                } else {
                    "result number"
                },
                result = numbers.result_number.result,
                n = numbers.result_number.n,
                sqrt = numbers.result_number.sqrt,
            ),
            None => String::new(),
        };
        html.push_str(&format!(
            "<li value=\"{seq}\" class=\"post{void_class} side-{side_class}\" id=\"post-{seq}\">\
             <div class=\"head\"><span class=\"seq\">#{seq}</span> <span class=\"side\">{side}</span> \
             <span class=\"author\">{author}</span> <span class=\"kind\">{kind}</span>{void_badge}</div>\
             <div class=\"time\"><time datetime=\"{stamp}\">{stamp}</time> · {tod}{result_number} \
             · <a href=\"/campaigns/{id}/posts/{seq}/audit\">audit</a></div>",
            seq = post.seq,
            void_class = if is_void { " void" } else { "" },
            side_class = escape(side),
            side = escape(side),
            author = escape(authors.name(post.author_id, &post.kind)),
            kind = escape(&post.kind),
            void_badge = if is_void { " <span class=\"badge\">void</span>" } else { "" },
            stamp = stamp_text(post.stamp),
            tod = numbers.time_of_day,
        ));
        if !outcomes.is_empty() {
            html.push_str("<ul class=\"outcomes\">");
            for o in &outcomes {
                let view = OutcomeView::of(o, None);
                html.push_str(&format!(
                    "<li class=\"outcome kind-{}\">{}{}</li>",
                    escape(&view.kind),
                    escape(&view.headline),
                    sealed_delay_line(&campaign, &view.data)
                ));
            }
            html.push_str("</ul>");
        }
        html.push_str("</li>");
    }
    html.push_str("</ol></section></main><footer>Adjutant · every number here can be recomputed from the post's time stamp: see <a href=\"/docs\">the API docs</a>.</footer>");
    html.push_str("<script src=\"/assets/page.js\"></script>");
    html.push_str("</body></html>");
    Ok(crate::routes::play::html_page(html))
}

/// For a sealed-delay battle: the stamp, the delay, the result time and its result number.
fn sealed_delay_line(campaign: &crate::campaign::LoadedCampaign, data: &Value) -> String {
    let Some(sealed) = data
        .get("sealed_delay")
        .and_then(|v| serde_json::from_value::<adjutant_rules::result_time::SealedDelay>(v.clone()).ok())
    else {
        return String::new();
    };
    let Some(result_time) = sealed.result_time() else { return String::new() };
    let numbers = stamp_numbers(campaign, result_time);
    format!(
        "<p class=\"sealed-delay\">Stamp <time datetime=\"{stamp}\">{stamp}</time> + sealed delay {delay} ms = \
         result time <time class=\"result-time\" datetime=\"{time}\">{time}</time> ({tod}) → result number \
         <b class=\"result\">{result:02}</b> (√{n} = {sqrt}); draw {draw} reveals s_{draw} = <code>{secret}</code></p>",
        stamp = escape(&sealed.stamp),
        delay = sealed.delay_ms,
        time = escape(&sealed.result_time),
        tod = numbers.time_of_day,
        result = numbers.result_number.result,
        n = numbers.result_number.n,
        sqrt = numbers.result_number.sqrt,
        draw = sealed.draw,
        secret = escape(&sealed.secret),
    )
}

/// The map at the start of each player turn so far (the turns a rollback voided left out), and
/// now: the page's script shows the one picked in place of the map.
async fn turn_history(state: &AppState, id: Uuid) -> ApiResult<String> {
    let begun = state.store.outcomes_of_kind(id, "turn_begins", 2000).await?;
    let void = crate::log::read::void_posts(&*state.store, id).await?;
    let mut turns: Vec<(u64, String, i64)> = vec![];
    for o in begun.iter().filter(|o| !void.contains(&o.seq)) {
        let data = crate::views::OutcomeView::of(o, None).data;
        let (Some(turn), Some(side)) = (data["turn"].as_u64(), data["side"].as_str()) else { continue };
        // A turn begun again after a rollback: the later beginning stands.
        turns.retain(|(t, s, _)| !(*t == turn && s == side));
        turns.push((turn, side.to_owned(), o.seq));
    }
    if turns.is_empty() {
        return Ok(String::new());
    }
    let mut out = String::from(
        "<nav id=\"history\" aria-label=\"The map as it was\"><h3>The map at the start of each player turn</h3><ol>",
    );
    for (turn, side, seq) in &turns {
        let name = if side == "union" { "Union" } else { "Rebels" };
        out.push_str(&format!(
            "<li><a href=\"/v1/campaigns/{id}/map.svg?at={seq}\" data-turn=\"{turn}\" data-side=\"{side}\">Turn {turn}, {name}</a></li>"
        ));
    }
    out.push_str(&format!("<li><a href=\"/v1/campaigns/{id}/map.svg\" data-now=\"1\">Now</a></li></ol></nav>"));
    Ok(out)
}

async fn last_seq(state: &AppState, id: Uuid) -> ApiResult<i64> {
    Ok(state.store.head(id).await?.map_or(0, |post| post.seq))
}

fn turn_summary(game: &Value) -> String {
    let side_name = |s: &Value| match s.as_str() {
        Some("union") => "the Union".to_owned(),
        Some("confederate") => "the Rebels".to_owned(),
        _ => "—".to_owned(),
    };
    let mut out = String::new();
    if let Some(result) = game.get("result").filter(|r| !r.is_null()) {
        out.push_str(&format!(
            "<p class=\"result-line\"><b>The game is over:</b> {}</p>",
            escape(result["condition"].as_str().unwrap_or_default())
        ));
        return out;
    }
    let phase = game["phase"].as_str().unwrap_or_default();
    if phase == "deployment" {
        out.push_str("<p class=\"turn-line\">Deployment: both sides place their units.</p>");
    } else {
        out.push_str(&format!(
            "<p class=\"turn-line\">Turn {}, {} phase: <b>{}</b> to act.</p>",
            game["turn"],
            escape(phase),
            side_name(&game["side_to_act"])
        ));
    }
    if let Some(awaiting) = game["awaiting"].as_array().filter(|a| !a.is_empty()) {
        out.push_str("<ul class=\"awaiting\">");
        for a in awaiting {
            out.push_str(&format!(
                "<li>Waiting for {}: {}</li>",
                side_name(&a["side"]),
                escape(a["detail"].as_str().unwrap_or_default())
            ));
        }
        out.push_str("</ul>");
    }
    let points = &game["reinforcement_points"];
    out.push_str(&format!(
        "<p class=\"points\">Reinforcement points stored: Union {}, Rebels {}.</p>",
        points["union"], points["confederate"]
    ));
    out
}
