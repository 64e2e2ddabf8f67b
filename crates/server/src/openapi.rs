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
        // The schemas these bodies refer to (the free line of their reasons), as utoipa collects
        // them for a route's own body.
        let mut referenced = Vec::new();
        {
            use crate::log::bodies::{ExtendBody, PauseBody, ResumeBody, UmpireBody};
            use utoipa::openapi::{schema::Schema, RefOr};
            use utoipa::{PartialSchema, ToSchema};
            type Collect = fn(&mut Vec<(String, RefOr<Schema>)>);
            for (name, schema, collect) in [
                ("PostBody.pause", PauseBody::schema(), PauseBody::schemas as Collect),
                ("PostBody.resume", ResumeBody::schema(), ResumeBody::schemas),
                ("PostBody.extend", ExtendBody::schema(), ExtendBody::schemas),
                ("PostBody.umpire", UmpireBody::schema(), UmpireBody::schemas),
            ] {
                schemas.push((name.to_owned(), serde_json::to_value(schema).unwrap_or_default()));
                collect(&mut referenced);
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
        for (name, schema) in referenced {
            components.schemas.entry(name).or_insert(schema);
        }
        for (name, mut schema) in schemas {
            // Titles name a generated client's models: the body types' own names repeat across
            // rulesets (`FireInput`) and post kinds (`EmptyBody`), the component's name does not.
            schema["title"] = serde_json::Value::String(model_name(&name));
            if let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(schema) {
                components.schemas.insert(name, schema);
            }
        }
    }
}

/// A post body's model name from its component's: `PostBody.short-acw.end_turn` is
/// `PostBodyShortAcwEndTurn`, as a generator would spell the component's name.
fn model_name(component: &str) -> String {
    component
        .split(|c: char| !c.is_ascii_alphanumeric())
        .flat_map(|word| {
            let mut chars = word.chars();
            chars.next().map(|first| first.to_ascii_uppercase()).into_iter().chain(chars)
        })
        .collect()
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
    downloads_as_bytes(&mut value);
    any_object_said_so(&mut value);
    value
}

/// An object schema that names no properties takes any (JSON Schema's default), but
/// openapi-typescript reads it as an object with none: `additionalProperties: true` says it
/// outright, so a post's body or an outcome's data is typed as the open object it is.
fn any_object_said_so(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(map) => {
            let is_object = match map.get("type") {
                Some(serde_json::Value::String(t)) => t == "object",
                Some(serde_json::Value::Array(types)) => types.iter().any(|t| t == "object"),
                _ => false,
            };
            let says_its_shape =
                ["properties", "additionalProperties", "patternProperties", "oneOf", "anyOf", "allOf", "$ref"]
                    .iter()
                    .any(|keyword| map.contains_key(*keyword));
            if is_object && !says_its_shape {
                map.insert("additionalProperties".to_owned(), serde_json::Value::Bool(true));
            }
            // Examples are values, not schemas.
            map.iter_mut().filter(|(key, _)| !key.starts_with("example")).for_each(|(_, v)| any_object_said_so(v));
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(any_object_said_so),
        _ => {}
    }
}

/// Whether a client generator reads a body of this media type with its default configuration:
/// JSON, text, or bytes.
fn generators_read(media_type: &str) -> bool {
    let essence = media_type.split(';').next().unwrap_or_default().trim();
    essence == "application/json"
        || essence.ends_with("+json")
        || essence.starts_with("text/")
        || essence == "application/octet-stream"
}

/// A response only in media types that generators do not decode (the export's NDJSON, the maps'
/// PNG and SVG) is described as bytes too, so that a generated client keeps the operation and
/// hands its body over as it came (docs/webhooks-and-bot.md says how to read each).
fn downloads_as_bytes(description: &mut serde_json::Value) {
    let Some(paths) = description.get_mut("paths").and_then(|paths| paths.as_object_mut()) else { return };
    let operations = paths.values_mut().filter_map(|item| item.as_object_mut()).flat_map(|item| item.values_mut());
    for operation in operations {
        let Some(responses) = operation.get_mut("responses").and_then(|r| r.as_object_mut()) else { continue };
        for content in responses.values_mut().filter_map(|response| response.get_mut("content")?.as_object_mut()) {
            if content.is_empty() || content.keys().any(|media_type| generators_read(media_type)) {
                continue;
            }
            let named: Vec<String> = content.keys().map(|media_type| format!("`{media_type}`")).collect();
            content.insert(
                "application/octet-stream".to_owned(),
                serde_json::json!({"schema": {
                    "type": "string",
                    "format": "binary",
                    "description": format!("The body's bytes as served: its Content-Type is {}.", named.join(" or ")),
                }}),
            );
        }
    }
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

    /// A generated client names a model by its schema's title, or by its component's name when
    /// it has none, spelled as an identifier: two schemas that fold to the same identifier are
    /// two models of one name, and a generator drops one of them.
    fn model_names(doc: &serde_json::Value) -> Vec<(String, String)> {
        fn nested_titles(schema: &serde_json::Value, at: &str, names: &mut Vec<(String, String)>) {
            match schema {
                serde_json::Value::Object(map) => {
                    for (key, value) in map.iter().filter(|(key, _)| !key.starts_with("example")) {
                        if key == "title" {
                            if let Some(title) = value.as_str() {
                                names.push((title.to_owned(), at.to_owned()));
                            }
                        } else {
                            nested_titles(value, &format!("{at}/{key}"), names);
                        }
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        nested_titles(item, &format!("{at}/{i}"), names);
                    }
                }
                _ => {}
            }
        }
        let mut names = Vec::new();
        for (component, schema) in doc["components"]["schemas"].as_object().unwrap() {
            let at = format!("#/components/schemas/{component}");
            if schema["title"].is_null() {
                names.push((component.clone(), at.clone()));
            }
            nested_titles(schema, &at, &mut names);
        }
        names
    }

    fn identifier(name: &str) -> String {
        name.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
    }

    #[test]
    fn no_two_schemas_share_a_model_name() {
        let doc = served_json();
        let names = model_names(&doc);
        assert!(names.len() > 100, "every component and title is read: {}", names.len());
        let mut seen = std::collections::BTreeMap::new();
        for (name, at) in &names {
            if let Some(first) = seen.insert(identifier(name), (name, at)) {
                panic!("{name:?} at {at} and {:?} at {} are one model name in a generated client", first.0, first.1);
            }
        }
    }

    #[test]
    fn model_names_that_fold_together_are_caught() {
        // The check above compares names as a generator's identifiers, not as strings.
        assert_eq!(identifier("PostBody.short-acw.end_turn"), identifier("PostBodyShortAcwEndTurn"));
        assert_ne!(identifier("PostBodyOpsTablesFire"), identifier("PostBodyAcw25mmFire"));
        let doc = serde_json::json!({"components": {"schemas": {
            "PostBody.ops-tables.fire": {"type": "object", "title": "FireInput"},
            "PostBody.acw-25mm.fire": {"type": "object", "properties": {"target": {"title": "Fire_Input"}}},
        }}});
        let mut folded: Vec<String> = model_names(&doc).iter().map(|(name, _)| identifier(name)).collect();
        folded.sort();
        assert_eq!(folded, ["fireinput", "fireinput", "postbodyacw25mmfire"]);
    }

    /// Every post body a campaign takes: the managed game's kinds, the moderators' kinds, and each
    /// ruleset's actions for `resolve`.
    fn post_body_components() -> Vec<String> {
        let mut names: Vec<String> =
            ["pause", "resume", "extend", "umpire"].iter().map(|kind| format!("PostBody.{kind}")).collect();
        names.extend(adjutant_rules::short_acw::post_kinds().iter().map(|k| format!("PostBody.short-acw.{}", k.kind)));
        for ruleset in adjutant_rules::resolver::rulesets() {
            names.extend(ruleset.actions().iter().map(|a| format!("PostBody.{}.{}", ruleset.name(), a.name)));
        }
        names
    }

    #[test]
    fn every_post_body_is_a_model_of_its_own() {
        let doc = served_json();
        let bodies = post_body_components();
        assert!(bodies.len() > 40, "{bodies:?}");
        for name in &bodies {
            let schema = &doc["components"]["schemas"][name];
            assert_eq!(schema["type"], "object", "{name} is an object: {schema}");
            assert_eq!(schema["title"], model_name(name), "{name} is titled by its component's name");
            assert!(
                schema["properties"].is_object() || schema["additionalProperties"] == false,
                "{name} says what it holds: {schema}"
            );
            // Each reference resolves in the description itself (a schema of the rules crate
            // keeps nothing in `$defs` of its own).
            let text = schema.to_string();
            for reference in text.split("\"$ref\":\"").skip(1).filter_map(|rest| rest.split('"').next()) {
                let target = reference.strip_prefix('#').and_then(|pointer| doc.pointer(pointer));
                assert!(target.is_some(), "{name}: {reference} does not resolve");
            }
        }
        // And no other post body is described than those a campaign takes.
        let described = doc["components"]["schemas"].as_object().unwrap().keys().filter(|k| k.starts_with("PostBody."));
        for name in described {
            assert!(bodies.contains(name), "{name} is described but no campaign takes it");
        }
    }

    #[test]
    fn the_time_zone_pattern_is_every_zone_the_server_knows() {
        let doc = served_json();
        let zone = &doc["components"]["schemas"]["CampaignSettings"]["properties"]["time_zone"];
        assert!(zone["enum"].is_null(), "an enum of zones collides in generated clients (GMT0, GMT+0): {zone}");
        let pattern = zone["pattern"].as_str().expect("a pattern");
        let alternatives = pattern.strip_prefix("^(?:").and_then(|p| p.strip_suffix(")$")).expect("anchored");
        let listed: std::collections::BTreeSet<String> =
            alternatives.split('|').map(|name| name.replace("\\+", "+")).collect();
        let known: std::collections::BTreeSet<String> =
            chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name().to_owned()).collect();
        assert_eq!(listed, known);
        for name in &known {
            // Only `+` needs escaping in a name, and every listed name is one the settings take.
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || "/_-+".contains(c)),
                "{name} holds a character the pattern would have to escape"
            );
            let settings = crate::campaign::CampaignSettings { time_zone: name.clone(), ..Default::default() };
            assert!(settings.clock_of().is_ok(), "{name} is listed and refused");
        }
        for example in ["GMT", "GMT0", "GMT+0", "GMT-0", "Etc/GMT+5", "America/New_York"] {
            assert!(listed.contains(example), "{example}");
        }
        // The new campaign's settings and the calculator's query say the same.
        let new_zone = &doc["components"]["schemas"]["NewCampaignSettings"]["properties"]["time_zone"];
        assert_eq!(new_zone["pattern"], pattern);
        let query = doc["paths"]["/v1/tools/sealed-delay"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "time_zone")
            .expect("a time_zone parameter");
        assert_eq!(query["schema"]["pattern"], pattern);
    }

    #[test]
    fn every_response_body_is_one_a_generator_reads() {
        let doc = served_json();
        let mut downloads = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                for (status, response) in operation["responses"].as_object().into_iter().flatten() {
                    let Some(content) = response["content"].as_object() else { continue };
                    assert!(
                        content.keys().any(|media_type| generators_read(media_type)),
                        "{method} {path} {status}: {:?}",
                        content.keys().collect::<Vec<_>>()
                    );
                    if content.contains_key("application/octet-stream") {
                        downloads.push(format!("{method} {path}"));
                    }
                }
            }
        }
        for download in
            ["get /v1/campaigns/{id}/export", "get /v1/campaigns/{id}/map.png", "get /v1/campaigns/{id}/map.svg"]
        {
            assert!(downloads.iter().any(|d| d == download), "{download} is read as bytes: {downloads:?}");
        }
        assert!(!generators_read("image/png") && !generators_read("application/x-ndjson"));
        assert!(generators_read("application/problem+json") && generators_read("text/event-stream"));
    }

    #[test]
    fn an_object_of_any_shape_says_so() {
        let doc = served_json();
        let body = &doc["components"]["schemas"]["NewPost"]["properties"]["body"];
        assert_eq!(body["additionalProperties"], true, "{body}");
        let data = &doc["components"]["schemas"]["OutcomeView"]["properties"]["data"];
        assert_eq!(data["additionalProperties"], true, "{data}");
        // A body with no fields keeps refusing any.
        assert_eq!(doc["components"]["schemas"]["PostBody.short-acw.end_turn"]["additionalProperties"], false);
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
