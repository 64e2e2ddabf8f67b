//! The OpenAPI 3.1 document at `/v1/openapi.json` and the API docs page at `/docs`, served
//! from the binary (the page's scripts are built in: it works with no network).

use axum::Router;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use crate::openapi_problems::CommonProblems;
use crate::AppState;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Adjutant",
        description = "Adjudicates play-by-forum wargame campaigns. The server stamps every post with its own clock and derives every random outcome from that stamp, so anyone can recompute it.",
    ),
    components(schemas(crate::error::Problem, crate::error::ProblemItem)),
    tags(
        (name = "tokens", description = "Moderators, player and bot tokens"),
        (name = "scenarios", description = "Scenarios of the managed game: the server's, and those moderators upload"),
        (name = "campaigns", description = "Campaigns"),
        (name = "posts", description = "The campaign log"),
        (name = "audit", description = "Recomputing every number"),
        (name = "tools", description = "The public calculator"),
        (name = "game", description = "The managed Short ACW Campaign"),
        (name = "rulesets", description = "Resolver rulesets: the dice and tables of tabletop games"),
        (name = "webhooks", description = "Outcomes POSTed to moderators' endpoints, signed by the Standard Webhooks scheme"),
        (name = "feed", description = "Outcomes for the forum, and their acknowledgement by bots"),
        (name = "service", description = "Health"),
    )
)]
pub struct ApiDoc;

/// The description of the API. `registered` is what `routes::router` built: the derive above,
/// with each operation added by its route. The bearer scheme, the post examples and the common
/// problems come last, as they read the operations.
pub fn description(mut registered: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    for modifier in [&BearerAuth as &dyn Modify, &PostExamples, &CommonProblems] {
        modifier.modify(&mut registered);
    }
    registered
}

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

/// Every post kind and resolver action as a documented example of the post request, and the
/// schema of each body as a component (`PostBody.short-acw.<kind>`, `PostBody.<ruleset>.<action>`).
struct PostExamples;

impl Modify for PostExamples {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use adjutant_rules::resolver;
        use adjutant_rules::short_acw;
        use serde_json::json;
        use utoipa::openapi::example::ExampleBuilder;
        use utoipa::openapi::{RefOr, Schema};

        let mut examples = Vec::new();
        let mut schemas = Vec::new();
        examples.push((
            "note".to_owned(),
            "A remark in the log; it changes nothing.".to_owned(),
            json!({"kind": "note", "body": {"text": "Good game so far."}}),
        ));
        examples.push((
            "rollback".to_owned(),
            "Moderators: void every post after `to_seq`, with the reason.".to_owned(),
            json!({"kind": "rollback", "body": {"to_seq": 12, "reason": "Post 13 moved a unit the player did not mean to move."}}),
        ));
        examples.push((
            "umpire".to_owned(),
            "Managed campaigns, moderators: post for a side whose player is absent (anything that side may post now: deploy, move, attack, end_turn, an answer to a battle), with the reason.".to_owned(),
            json!({"kind": "umpire", "body": {"side": "confederate", "kind": "casualty_order", "body": {"order": []},
                   "reason": "The Rebel player has not posted for three days."}}),
        ));
        examples.push((
            "seal".to_owned(),
            "Resolver campaigns: a secret choice (e.g. melee stay or retreat), shown as \"sealed\" until the other group's choice on the topic is in.".to_owned(),
            json!({"kind": "seal", "body": {"topic": "melee-1-round-2", "role": "attacker", "choice": "stay"}}),
        ));
        examples.push((
            "resolve-with-sealed-choices".to_owned(),
            "Resolver campaigns: resolve with the two sealed choices of a topic as `attacker_choice` and `defender_choice`.".to_owned(),
            json!({"kind": "resolve", "body": {"action": "melee_round", "sealed": "melee-1-round-2",
                   "inputs": {"round": 2, "attacker": {"troops": "infantry", "men": 4}, "defender": {"troops": "infantry", "men": 3}}}}),
        ));
        examples.push((
            "pause".to_owned(),
            "Managed campaigns, moderators: pause the campaign; no player post is taken and no deadline runs until `resume`.".to_owned(),
            json!({"kind": "pause", "body": {"reason": "Holidays: back on the 3rd."}}),
        ));
        examples.push((
            "resume".to_owned(),
            "Managed campaigns, moderators: resume a paused campaign; each deadline has the time it had left."
                .to_owned(),
            json!({"kind": "resume", "body": {}}),
        ));
        examples.push((
            "extend".to_owned(),
            "Managed campaigns with deadlines, moderators: move the deadlines still to come later (of one side, with `side`).".to_owned(),
            json!({"kind": "extend", "body": {"by": "PT24H", "side": "confederate", "reason": "Travelling until Sunday."}}),
        ));
        {
            use utoipa::PartialSchema;
            for (name, schema) in [
                ("PostBody.pause", crate::log::bodies::PauseBody::schema()),
                ("PostBody.resume", crate::log::bodies::ResumeBody::schema()),
                ("PostBody.extend", crate::log::bodies::ExtendBody::schema()),
                ("PostBody.umpire", crate::log::bodies::UmpireBody::schema()),
            ] {
                schemas.push((name.to_owned(), serde_json::to_value(schema).unwrap_or_default()));
            }
        }
        for k in short_acw::post_kinds() {
            examples.push((
                format!("short-acw.{}", k.kind),
                k.summary.to_owned(),
                json!({"kind": k.kind, "body": k.example}),
            ));
            schemas.push((format!("PostBody.short-acw.{}", k.kind), k.body_schema));
        }
        for r in resolver::rulesets() {
            for a in r.actions() {
                examples.push((
                    format!("{}.{}", r.name(), a.name),
                    a.summary.to_owned(),
                    json!({"kind": "resolve", "body": {"action": a.name, "inputs": a.example}}),
                ));
                schemas.push((format!("PostBody.{}.{}", r.name(), a.name), a.input_schema));
            }
        }

        if let Some(content) = openapi
            .paths
            .paths
            .get_mut("/v1/campaigns/{id}/posts")
            .and_then(|item| item.post.as_mut())
            .and_then(|op| op.request_body.as_mut())
            .and_then(|body| body.content.get_mut("application/json"))
        {
            for (name, summary, value) in examples {
                content
                    .examples
                    .insert(name, RefOr::T(ExampleBuilder::new().summary(summary).value(Some(value)).build()));
            }
        }
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, schema) in schemas {
            if let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(schema) {
                components.schemas.insert(name, schema);
            }
        }
    }
}

/// The docs page and the description it reads, from `registered`: the API as `routes::router`
/// built it.
pub fn router(scenarios: &crate::campaign::Scenarios, registered: utoipa::openapi::OpenApi) -> Router<AppState> {
    Router::new()
        .merge(SwaggerUi::new("/docs").external_url_unchecked("/v1/openapi.json", served(scenarios, registered)))
        .layer(axum::middleware::map_response(docs_headers))
}

/// The docs page's scripts come from this server only, as on every other page; Swagger UI sets
/// element styles as it draws, so inline styles are allowed here (and only here).
const DOCS_CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

async fn docs_headers(mut response: axum::response::Response) -> axum::response::Response {
    use axum::http::{header, HeaderName, HeaderValue};
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(DOCS_CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(HeaderName::from_static("referrer-policy"), HeaderValue::from_static("no-referrer"));
    response
}

/// The description as this server serves it: the scenarios it has are the `scenario` enum of a
/// new managed campaign (or an upload's id), so a generated client offers exactly those; and each create operation
/// links to the reads of what it made, so a client (or a stateful test) can follow real ids.
///
/// It is JSON, not utoipa's types: those would write a link's `operationId` as `operation_id`.
pub fn served(scenarios: &crate::campaign::Scenarios, registered: utoipa::openapi::OpenApi) -> serde_json::Value {
    use serde_json::json;
    let mut value = serde_json::to_value(description(registered))
        .unwrap_or_else(|e| panic!("the OpenAPI description does not serialize: {e}"));
    if let Some(scenario) = value.pointer_mut("/components/schemas/NewCampaign/oneOf/0/properties/scenario") {
        let names = json!(scenarios.names().collect::<Vec<_>>());
        let uploaded = json!({"pattern": crate::routes::scenarios::UPLOADED_ID_PATTERN, "description": "a moderator's own upload"});
        scenario["anyOf"] = json!([{"enum": names}, uploaded]);
    }
    let campaign_id = json!({"id": "$response.body#/id"});
    let same_campaign = json!({"id": "$request.path.id"});
    let links = [
        (
            "/v1/campaigns",
            "post",
            "201",
            vec![
                ("GetCampaign", "get_campaign", campaign_id.clone()),
                ("ListPosts", "list_posts", campaign_id.clone()),
                ("AuditCampaign", "audit_campaign", campaign_id.clone()),
                ("FairnessReport", "fairness_report", campaign_id.clone()),
                ("CampaignOutcomes", "campaign_outcomes", campaign_id.clone()),
                ("CreatePlayer", "create_player", campaign_id.clone()),
                ("CreateBot", "create_bot", campaign_id.clone()),
                ("ListWebhooks", "list_webhooks", campaign_id.clone()),
            ],
        ),
        (
            "/v1/campaigns/{id}/posts",
            "post",
            "201",
            vec![
                ("GetPost", "get_post", json!({"id": "$request.path.id", "seq": "$response.body#/seq"})),
                ("AuditPost", "audit_post", json!({"id": "$request.path.id", "seq": "$response.body#/seq"})),
                ("ListPosts", "list_posts", same_campaign.clone()),
            ],
        ),
        (
            "/v1/campaigns/{id}/webhooks",
            "post",
            "201",
            vec![
                (
                    "ListDeliveries",
                    "list_deliveries",
                    json!({"id": "$request.path.id", "webhook_id": "$response.body#/id"}),
                ),
                ("ListWebhooks", "list_webhooks", same_campaign.clone()),
            ],
        ),
        ("/v1/campaigns/{id}/players", "post", "201", vec![("GetCampaign", "get_campaign", same_campaign.clone())]),
        ("/v1/campaigns/{id}/bots", "post", "201", vec![("GetCampaign", "get_campaign", same_campaign)]),
    ];
    for (path, method, status, to) in links {
        let pointer = format!("/paths/{}/{method}/responses/{status}", path.replace('~', "~0").replace('/', "~1"));
        if let Some(response) = value.pointer_mut(&pointer) {
            let links: serde_json::Map<String, serde_json::Value> = to
                .into_iter()
                .map(|(name, operation, parameters)| {
                    (name.to_owned(), json!({"operationId": operation, "parameters": parameters}))
                })
                .collect();
            response["links"] = serde_json::Value::Object(links);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served_json() -> serde_json::Value {
        let scenarios = crate::campaign::Scenarios::load(std::path::Path::new("no such folder")).unwrap();
        served(&scenarios, crate::routes::router().into_openapi())
    }

    #[test]
    fn the_rules_versions_described_are_the_ones_there_are() {
        // A new rules version must raise the description's maximum with it.
        let doc = served_json();
        for schema in ["CampaignSettings", "NewCampaignSettings"] {
            let version = &doc["components"]["schemas"][schema]["properties"]["rules_version"];
            if version.is_null() {
                continue;
            }
            assert_eq!(version["maximum"], adjutant_rules::RULES_VERSION, "{schema}: {version}");
            assert_eq!(version["minimum"], 1, "{schema}: {version}");
        }
        let version = &doc["components"]["schemas"]["CampaignSettings"]["properties"]["rules_version"];
        assert!(!version.is_null(), "CampaignSettings has no rules_version");
    }

    #[test]
    fn the_served_description_lists_the_scenarios_and_links_creates_to_reads() {
        let doc = served_json();
        let scenario = &doc["components"]["schemas"]["NewCampaign"]["oneOf"][0]["properties"]["scenario"];
        assert_eq!(scenario["anyOf"][0]["enum"], serde_json::json!(["short-acw"]), "{scenario}");
        assert_eq!(scenario["anyOf"][1]["pattern"], "^[0-9a-f]{64}$", "{scenario}");
        let links = &doc["paths"]["/v1/campaigns"]["post"]["responses"]["201"]["links"];
        assert_eq!(links["GetCampaign"]["operationId"], "get_campaign", "{links}");
        assert_eq!(links["GetCampaign"]["parameters"]["id"], "$response.body#/id");
        let links = &doc["paths"]["/v1/campaigns/{id}/posts"]["post"]["responses"]["201"]["links"];
        assert_eq!(links["AuditPost"]["parameters"]["seq"], "$response.body#/seq", "{links}");
        // Every link names an operation that exists.
        let operations: Vec<String> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .filter_map(|op| op["operationId"].as_str().map(str::to_owned))
            .collect();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for response in op["responses"].as_object().into_iter().flat_map(|r| r.values()) {
                    for link in response["links"].as_object().into_iter().flat_map(|l| l.values()) {
                        let target = link["operationId"].as_str().unwrap();
                        assert!(
                            operations.iter().any(|o| o == target),
                            "a link to {target}, which is not an operation"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_new_campaign_is_one_of_two_modes() {
        let doc = served_json();
        let new_campaign = &doc["components"]["schemas"]["NewCampaign"];
        let modes = new_campaign["oneOf"].as_array().unwrap();
        assert_eq!(modes.len(), 2);
        assert_eq!(modes[1]["required"], serde_json::json!(["name", "ruleset"]));
        assert!(doc["components"]["schemas"]["CampaignSettings"].is_object(), "settings are a component");
    }
}
