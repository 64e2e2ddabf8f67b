//! A stand-in Discourse forum for the reference bot: one topic, its posts in memory, the
//! endpoints the bot calls, and what a test needs to play the forum's part (a 429 with
//! Retry-After, requests with the wrong key counted, uploads kept).
//!
//! Its answers carry what the bot reads; built on Discourse's own description
//! (`Forum::described_by`), they also carry every field that description requires, so that
//! `prism proxy --errors` in front of the forum finds them valid.

use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

/// The forum's one topic.
pub const TOPIC: u64 = 77;
/// The key the bot must send (`Api-Key`).
pub const API_KEY: &str = "forum-key-123";
/// The bot's user name on the forum (`Api-Username`).
pub const BOT_USER: &str = "adjutant";

#[derive(Debug, Clone)]
pub struct ForumPost {
    pub id: u64,
    pub username: String,
    pub raw: String,
}

/// The answers the forum fills in: empty, or the least a description allows.
#[derive(Default)]
struct Templates {
    topic: Value,
    topic_post: Value,
    posts_post: Value,
    created: Value,
}

#[derive(Default)]
struct ForumState {
    posts: Vec<ForumPost>,
    /// Answer the next `POST /posts.json` with 429 and this Retry-After.
    throttle_next: Option<&'static str>,
    throttled: usize,
    /// Requests without the right key and user name.
    refused: usize,
    /// Bodies of `POST /uploads.json`.
    uploads: Vec<Vec<u8>>,
    /// Answer the topic without a field the description requires (to see a proxy catch it).
    break_answers: bool,
    templates: Templates,
}

/// The forum, a handle on its state (clones share it). `Forum::default()` answers with what the
/// bot reads.
#[derive(Clone, Default)]
pub struct Forum(Arc<Mutex<ForumState>>);

impl Forum {
    /// A forum whose answers are built on the least answers `spec` (Discourse's `openapi.json`)
    /// allows: every required property, with zeros, empty strings, false, empty lists or null.
    pub fn described_by(spec: &Value) -> Self {
        let topic = answer_schema(spec, "/t/{id}.json", "get");
        let posts = answer_schema(spec, "/t/{id}/posts.json", "get");
        let templates = Templates {
            topic: least(topic),
            topic_post: least(&topic["properties"]["post_stream"]["properties"]["posts"]["items"]),
            posts_post: least(&posts["properties"]["post_stream"]["properties"]["posts"]["items"]),
            created: least(answer_schema(spec, "/posts.json", "post")),
        };
        Forum(Arc::new(Mutex::new(ForumState { templates, ..ForumState::default() })))
    }

    /// Serves the forum on a free loopback port; its base URL.
    pub async fn start(&self) -> String {
        crate::serve(
            axum::Router::new()
                .route("/posts.json", axum::routing::post(create_post))
                .route("/uploads.json", axum::routing::post(upload))
                .route("/t/{file}", axum::routing::get(topic))
                .route("/t/{topic}/posts.json", axum::routing::get(topic_posts))
                .with_state(self.clone()),
        )
        .await
    }

    /// A post by `username` in the topic; its id.
    pub fn add(&self, username: &str, raw: &str) -> u64 {
        let mut state = self.state();
        let id = 1000 + state.posts.len() as u64;
        state.posts.push(ForumPost { id, username: username.into(), raw: raw.into() });
        id
    }

    /// The topic's posts, oldest first.
    pub fn posts(&self) -> Vec<ForumPost> {
        self.state().posts.clone()
    }

    /// Answers the next `POST /posts.json` with 429 and `Retry-After: after`.
    pub fn throttle_next(&self, after: &'static str) {
        self.state().throttle_next = Some(after);
    }

    /// How many posts were answered 429.
    pub fn throttled(&self) -> usize {
        self.state().throttled
    }

    /// How many requests came without the bot's key and user name.
    pub fn refused(&self) -> usize {
        self.state().refused
    }

    /// The bodies of the uploads, in order.
    pub fn uploads(&self) -> Vec<Vec<u8>> {
        self.state().uploads.clone()
    }

    /// While `broken`, the topic is answered without its title, which Discourse's description
    /// requires.
    pub fn break_answers(&self, broken: bool) {
        self.state().break_answers = broken;
    }

    fn state(&self) -> MutexGuard<'_, ForumState> {
        self.0.lock().expect("the forum's state")
    }
}

fn answer_schema<'a>(spec: &'a Value, path: &str, method: &str) -> &'a Value {
    &spec["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
}

/// The least value a JSON schema (as Discourse's description writes them: no `$ref`) allows.
fn least(schema: &Value) -> Value {
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null").unwrap_or("null"),
        Value::String(kind) => kind.as_str(),
        _ if schema["properties"].is_object() => "object",
        _ => "null",
    };
    match kind {
        "object" => {
            let mut out = serde_json::Map::new();
            for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                out.insert(name.to_owned(), least(&schema["properties"][name]));
            }
            Value::Object(out)
        }
        "array" => json!([]),
        "string" => json!(""),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

fn authorised(forum: &Forum, headers: &HeaderMap) -> bool {
    let ok = headers.get("api-key").is_some_and(|v| v == API_KEY)
        && headers.get("api-username").is_some_and(|v| v == BOT_USER);
    if !ok {
        forum.state().refused += 1;
    }
    ok
}

/// A post as the forum shows it: `template` filled in, its text cooked (never its raw text).
fn view(template: &Value, post: &ForumPost, number: usize) -> Value {
    let mut v = template.clone();
    v["id"] = json!(post.id);
    v["username"] = json!(post.username);
    v["topic_id"] = json!(TOPIC);
    v["post_number"] = json!(number + 1);
    v["cooked"] = json!(format!("<p>{}</p>", post.raw.replace('<', "&lt;").replace('\n', "<br>")));
    v
}

/// `POST /posts.json` with `{topic_id, raw}`.
async fn create_post(State(forum): State<Forum>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if !authorised(&forum, &headers) {
        return (StatusCode::FORBIDDEN, Json(json!({"errors": ["bad key"]}))).into_response();
    }
    let throttle = {
        let mut state = forum.state();
        let after = state.throttle_next.take();
        state.throttled += usize::from(after.is_some());
        after
    };
    if let Some(after) = throttle {
        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", after)], Json(json!({"errors": ["slow down"]})))
            .into_response();
    }
    let (Some(topic_id), Some(raw)) = (body["topic_id"].as_u64(), body["raw"].as_str()) else {
        return (StatusCode::UNPROCESSABLE_ENTITY, Json(json!({"errors": ["topic_id and raw"]}))).into_response();
    };
    assert_eq!(topic_id, TOPIC);
    let id = forum.add(BOT_USER, raw);
    let state = forum.state();
    let mut answer = view(&state.templates.created, state.posts.last().expect("the new post"), state.posts.len() - 1);
    answer["raw"] = json!(raw);
    assert_eq!(answer["id"], id);
    Json(answer).into_response()
}

/// `POST /uploads.json` (multipart): keeps the body, answers as Discourse does.
async fn upload(State(forum): State<Forum>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if !authorised(&forum, &headers) {
        return StatusCode::FORBIDDEN.into_response();
    }
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(content_type.starts_with("multipart/form-data; boundary="), "{content_type}");
    let mut state = forum.state();
    state.uploads.push(body.to_vec());
    let n = state.uploads.len();
    Json(json!({"id": n, "url": format!("/uploads/default/original/1X/map{n}.png"), "short_url": format!("upload://map{n}.png"),
        "original_filename": "map.png", "extension": "png"}))
    .into_response()
}

/// `GET /t/{topic}.json`: like Discourse, the whole stream of ids but only the first posts
/// (without their raw text: the description allows none).
async fn topic(State(forum): State<Forum>, headers: HeaderMap, Path(file): Path<String>) -> Response {
    if !authorised(&forum, &headers) {
        return StatusCode::FORBIDDEN.into_response();
    }
    if file != format!("{TOPIC}.json") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let state = forum.state();
    let mut answer = state.templates.topic.clone();
    answer["id"] = json!(TOPIC);
    answer["post_stream"]["stream"] = state.posts.iter().map(|p| json!(p.id)).collect();
    answer["post_stream"]["posts"] =
        state.posts.iter().take(2).enumerate().map(|(n, p)| view(&state.templates.topic_post, p, n)).collect();
    if state.break_answers {
        answer.as_object_mut().expect("an object").remove("title");
    }
    Json(answer).into_response()
}

/// `GET /t/{topic}/posts.json?post_ids[]=…&include_raw=true`
async fn topic_posts(
    State(forum): State<Forum>,
    headers: HeaderMap,
    Path(topic): Path<u64>,
    RawQuery(query): RawQuery,
) -> Response {
    if !authorised(&forum, &headers) {
        return StatusCode::FORBIDDEN.into_response();
    }
    if topic != TOPIC {
        return StatusCode::NOT_FOUND.into_response();
    }
    let query = query.unwrap_or_default();
    let with_raw = query.split('&').any(|p| p == "include_raw=true");
    let ids: Vec<u64> = query
        .split('&')
        .filter_map(|p| p.strip_prefix("post_ids[]=").or_else(|| p.strip_prefix("post_ids%5B%5D=")))
        .filter_map(|id| id.parse().ok())
        .collect();
    let state = forum.state();
    let posts: Vec<Value> = state
        .posts
        .iter()
        .enumerate()
        .filter(|(_, p)| ids.contains(&p.id))
        .map(|(n, p)| {
            let mut v = view(&state.templates.posts_post, p, n);
            if with_raw {
                v["raw"] = json!(p.raw);
            }
            v
        })
        .collect();
    Json(json!({"post_stream": {"posts": posts}, "id": TOPIC})).into_response()
}
