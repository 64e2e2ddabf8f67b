//! The pages people play and moderate from: `/play/{id}` for a player, `/console` for a
//! moderator. The HTML comes from templates (minijinja, escaping by default); the script is
//! plain JavaScript served from the binary. Tokens travel in the URL fragment, which never
//! reaches the server, and go out only as `Authorization: Bearer`; there are no cookies.

use axum::extract::State;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use minijinja::{context, Environment};
use uuid::Uuid;

use utoipa_axum::router::OpenApiRouter;

use crate::campaign::Game;
use crate::error::{ApiResult, AppError};
use crate::extract::ApiPath;
use crate::routes::shared::load_campaign;
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/play/{id}", get(play_page))
        .route("/console", get(console_page))
        .route("/assets/app.css", get(|| asset("text/css; charset=utf-8", APP_CSS)))
        .route("/assets/common.js", get(|| asset(JAVASCRIPT, COMMON_JS)))
        .route("/assets/play.js", get(|| asset(JAVASCRIPT, PLAY_JS)))
        .route("/assets/console.js", get(|| asset(JAVASCRIPT, CONSOLE_JS)))
}

const APP_CSS: &str = include_str!("../../assets/app.css");
const COMMON_JS: &str = include_str!("../../assets/common.js");
const PLAY_JS: &str = include_str!("../../assets/play.js");
const CONSOLE_JS: &str = include_str!("../../assets/console.js");

/// Scripts only from this server, no inline script or style, no framing, no form posts away.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

pub(crate) const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

/// A file of the pages, served from the binary and asked again on each load (no-cache), so a
/// page's scripts always come from one version of the server.
pub(crate) async fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

fn templates() -> &'static Environment<'static> {
    static ENV: std::sync::OnceLock<Environment<'static>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        // `.html` names escape every value by default.
        for (name, text) in [
            ("campaign.html", include_str!("../../assets/campaign.html")),
            ("play.html", include_str!("../../assets/play.html")),
            ("console.html", include_str!("../../assets/console.html")),
            ("report.html", include_str!("../../assets/report.html")),
            ("audit.html", include_str!("../../assets/audit.html")),
            ("post-audit.html", include_str!("../../assets/post-audit.html")),
            ("fairness.html", include_str!("../../assets/fairness.html")),
        ] {
            if let Err(e) = env.add_template(name, text) {
                tracing::error!(template = name, error = %e, "template does not parse");
            }
        }
        env
    })
}

/// An HTML page with the headers every page carries.
pub fn html_page(body: String) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(HeaderName::from_static("referrer-policy"), HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(crate) fn render(name: &str, ctx: minijinja::Value) -> ApiResult<Response> {
    let template = templates().get_template(name).map_err(|e| AppError::Internal(e.to_string()))?;
    let body = template.render(ctx).map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(html_page(body))
}

async fn play_page(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let (what, ruleset) = match &campaign.game {
        Game::Managed { scenario, .. } => (format!("Managed campaign · {}", scenario.title), String::new()),
        Game::Resolver { ruleset, .. } => {
            (format!("Resolver campaign · {}", ruleset.title()), ruleset.name().to_owned())
        }
    };
    render(
        "play.html",
        context! {
            id => id.to_string(),
            name => campaign.campaign.name.clone(),
            mode => campaign.campaign.mode.clone(),
            managed => campaign.scenario().is_some(),
            what => what,
            ruleset => ruleset,
        },
    )
}

async fn console_page(State(state): State<AppState>) -> ApiResult<Response> {
    let scenarios: Vec<String> = state.scenarios.names().map(str::to_owned).collect();
    let rulesets: Vec<String> = adjutant_rules::resolver::rulesets().iter().map(|r| r.name().to_owned()).collect();
    let rules_versions: Vec<u32> = (1..=adjutant_rules::RULES_VERSION).collect();
    render("console.html", context! { scenarios => scenarios, rulesets => rulesets, rules_versions => rules_versions })
}
