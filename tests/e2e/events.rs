//! The campaign's event stream: one `post` event per post, resumable with `Last-Event-ID`, and
//! a post made while a stream is open arrives on it.

use std::time::Duration;

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, Backend, TestApp};

on_both_backends! {
    the_event_stream_sends_each_post_once_and_resumes => event_stream;
}

/// The events of a finished stream's text: (id, event, data).
fn events(text: &str) -> Vec<(String, String, Value)> {
    text.split("\n\n")
        .filter(|block| block.lines().any(|l| l.starts_with("data:")))
        .map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .filter_map(|l| l.strip_prefix(name))
                    .map(|v| v.strip_prefix(' ').unwrap_or(v))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            (field("id:"), field("event:"), serde_json::from_str(&field("data:")).unwrap())
        })
        .collect()
}

async fn event_stream(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Stream", "scenario": "short-acw"})).await;
    let player = app.player(&moderator, &campaign, "union").await;
    for text in ["one", "two", "three"] {
        app.post(&player, &campaign, json!({"kind": "note", "body": {"text": text}})).await.ok(201);
    }
    let url = format!("{}/v1/campaigns/{campaign}/events", app.base);

    // Everything so far, then the stream closes (follow=false).
    let all = app.client.get(format!("{url}?follow=false")).send().await.unwrap();
    assert_eq!(all.status(), 200);
    assert_eq!(all.headers()["content-type"], "text/event-stream");
    let all = events(&all.text().await.unwrap());
    let ids: Vec<&str> = all.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3"]);
    assert!(all.iter().all(|(_, kind, _)| kind == "post"));
    assert_eq!(all[1].2["body"]["text"], "two");
    assert_eq!(all[1].2["seq"], 2);
    assert!(all[1].2["numbers"]["result_number"]["bc"].is_string());

    // Resumed after post 2: only post 3.
    let resumed = app.client.get(format!("{url}?follow=false")).header("Last-Event-ID", "2").send().await.unwrap();
    let resumed = events(&resumed.text().await.unwrap());
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].0, "3");
    let bad = app.client.get(format!("{url}?follow=false")).header("Last-Event-ID", "two").send().await.unwrap();
    let bad = adjutant_e2e::read(bad).await;
    bad.problem(400, "Last-Event-ID");
    for bad in ["2a", "-1", "1234567890123456789"] {
        let refused = app.client.get(format!("{url}?follow=false")).header("Last-Event-ID", bad).send().await.unwrap();
        adjutant_e2e::read(refused).await.problem(400, "Last-Event-ID");
    }
    // An empty Last-Event-ID is a client that has seen nothing yet: from the start.
    let fresh = app.client.get(format!("{url}?follow=false")).header("Last-Event-ID", "").send().await.unwrap();
    assert_eq!(events(&fresh.text().await.unwrap()).len(), 3);

    // A live stream: a post made after it opened arrives on it, once.
    let mut live = app.client.get(&url).header("Last-Event-ID", "3").send().await.unwrap();
    assert_eq!(live.status(), 200);
    app.post(&player, &campaign, json!({"kind": "note", "body": {"text": "four"}})).await.ok(201);
    let mut text = String::new();
    let got = tokio::time::timeout(Duration::from_secs(10), async {
        while !text.contains("\n\n") || events(&text).is_empty() {
            let chunk = live.chunk().await.unwrap().expect("the stream ended");
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(got.is_ok(), "no event within 10 s: {text:?}");
    let live_events = events(&text);
    assert_eq!(live_events.len(), 1, "{text}");
    assert_eq!(live_events[0].0, "4");
    assert_eq!(live_events[0].2["body"]["text"], "four");

    // The stream is in the OpenAPI description as text/event-stream.
    let doc = app.get("/v1/openapi.json").await;
    let op = &doc.ok(200)["paths"]["/v1/campaigns/{id}/events"]["get"];
    assert!(op["responses"]["200"]["content"]["text/event-stream"].is_object(), "{op}");
}
