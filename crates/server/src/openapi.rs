//! The OpenAPI 3.1 document at `/v1/openapi.json` and the API docs page at `/docs`, served
//! from the binary (the page's scripts are built in: it works with no network).

use axum::Router;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use crate::openapi_problems::CommonProblems;
use crate::routes;
use crate::AppState;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Adjutant",
        description = "Adjudicates play-by-forum wargame campaigns. The server stamps every post with its own clock and derives every random outcome from that stamp, so anyone can recompute it.",
    ),
    paths(
        routes::healthz,
        routes::tokens::create_moderator,
        routes::tokens::create_player,
        routes::tokens::create_bot,
        routes::campaigns::create_campaign,
        routes::campaigns::list_campaigns,
        routes::campaigns::get_campaign,
        routes::posts::create_post,
        routes::posts::list_posts,
        routes::posts::get_post,
        routes::audit::audit_post,
        routes::tools::result_number,
        routes::tools::reinforcement,
    ),
    components(schemas(crate::error::Problem)),
    modifiers(&BearerAuth, &CommonProblems),
    tags(
        (name = "tokens", description = "Moderators, player and bot tokens"),
        (name = "campaigns", description = "Campaigns"),
        (name = "posts", description = "The campaign log"),
        (name = "audit", description = "Recomputing every number"),
        (name = "tools", description = "The public calculator"),
        (name = "service", description = "Health"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

pub fn router() -> Router<AppState> {
    Router::new().merge(SwaggerUi::new("/docs").url("/v1/openapi.json", ApiDoc::openapi()))
}
