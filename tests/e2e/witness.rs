//! The log's witnesses outside the database: signed receipts, the genesis that binds the
//! campaign's creation record, the export, the offline verifier and the forum texts, each shown
//! catching a kind of tampering that a self-consistent hash chain alone would not.

use std::path::{Path, PathBuf};

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, Game, Table, TestApp};
use adjutant_server::verify::{verify, Options, Report};

on_both_backends! {
    a_rewritten_stamp_with_every_later_hash_recomputed_is_caught_by_its_signature => rewritten_stamp;
    a_cut_off_head_is_caught_by_the_forum_texts => cut_head;
    a_changed_setting_breaks_the_chain => changed_settings;
    a_campaign_exported_verifies_offline_with_the_server_stopped => offline;
    a_managed_campaign_replays_offline_battle_by_battle => managed_offline;
    the_database_refuses_to_change_or_truncate_the_record => guards;
}

fn note(text: &str) -> Value {
    json!({"kind": "note", "body": {"text": text}})
}

fn formation_test() -> Value {
    json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B"}}})
}

/// A resolver table whose record is witnessed: the server's receipt-signing key beside it.
struct Witnessed {
    app: TestApp,
    moderator: String,
    campaign: String,
    player: String,
    rebel: String,
    key: String,
}

async fn table(backend: Backend) -> Witnessed {
    let Table { app, moderator, campaign, union, confederate } =
        Table::open(TestApp::spawn(backend).await, "Witnessed", "acw-25mm").await;
    let keys = app.get("/v1/keys").await;
    let keys = keys.ok(200);
    assert_eq!(keys["keys"][0]["current"], true, "{keys}");
    let key = keys["keys"][0]["public_key"].as_str().unwrap().to_owned();
    Witnessed { app, moderator, campaign, player: union, rebel: confederate, key }
}

impl Witnessed {
    async fn post_at(&self, token: &str, ms: i64, body: Value) -> Value {
        self.app.clock.set(seed_morning() + chrono::Duration::milliseconds(ms));
        self.app.post(token, &self.campaign, body).await.ok(201).clone()
    }

    async fn export(&self, dir: &Path) -> PathBuf {
        let answer = self
            .app
            .client
            .get(format!("{}/v1/campaigns/{}/export", self.app.base, self.campaign))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 200);
        assert_eq!(answer.headers()["content-type"], "application/x-ndjson");
        let text = answer.text().await.unwrap();
        let path = dir.join("export.jsonl");
        std::fs::write(&path, text).unwrap();
        path
    }

    async fn audit(&self) -> Value {
        self.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", self.campaign)).await.ok(200).clone()
    }

    fn verify(&self, file: &Path, forum_texts: Option<&Path>) -> Report {
        verify(&Options { file: file.into(), keys: vec![self.key.clone()], forum_texts: forum_texts.map(Into::into) })
            .unwrap()
    }
}

fn problems_of(report: &Report, seq: i64) -> Vec<String> {
    report.problems.iter().filter(|p| p.seq == Some(seq)).map(|p| p.detail.clone()).collect()
}

/// Lifts the guards of the posts table, as someone with the database owner's rights can.
fn unguarded(backend: Backend, sql: &str) -> String {
    match backend {
        Backend::Sqlite => format!(
            "DROP TRIGGER IF EXISTS posts_append_only_update; DROP TRIGGER IF EXISTS posts_append_only_delete;
             DROP TRIGGER IF EXISTS outcomes_append_only_delete; {sql}"
        ),
        Backend::Postgres => format!(
            "ALTER TABLE posts DISABLE TRIGGER posts_append_only; ALTER TABLE outcomes DISABLE TRIGGER outcomes_append_only; {sql}"
        ),
    }
}

async fn rewritten_stamp(backend: Backend) {
    let t = table(backend).await;
    for i in 0..5 {
        t.post_at(&t.player, 1_001 * i, if i == 1 { formation_test() } else { note(&format!("order {i}")) }).await;
    }
    let clean = t.audit().await;
    assert_eq!(clean["ok"], true, "{clean}");

    // The tamperer moves post 3's stamp a second later and recomputes its hash and every later
    // one, so the chain is consistent with itself again.
    let posts = t.app.get(&format!("/v1/campaigns/{}/posts", t.campaign)).await.ok(200)["posts"].clone();
    let mut prev = posts[1]["hash"].as_str().unwrap().to_owned();
    let mut sql = String::new();
    for post in posts.as_array().unwrap().iter().skip(2) {
        let seq = post["seq"].as_i64().unwrap();
        let mut stamp: chrono::DateTime<chrono::Utc> = post["stamp"].as_str().unwrap().parse().unwrap();
        if seq == 3 {
            stamp += chrono::Duration::seconds(1);
        }
        let body = adjutant_e2e::serde_json::to_string(&post["body"]).unwrap();
        let hash = adjutant_rules::chain::Link {
            prev_hash: &prev,
            campaign_id: &t.campaign,
            seq,
            stamp,
            author_id: post["author_id"].as_str().unwrap(),
            side: post["side"].as_str(),
            kind: post["kind"].as_str().unwrap(),
            body: &body,
        }
        .hash();
        let ms = stamp.timestamp_millis();
        let stamp_sql = match backend {
            Backend::Sqlite => format!("stamp_ms = {ms}"),
            Backend::Postgres => format!("stamp = TIMESTAMPTZ 'epoch' + {ms} * INTERVAL '1 millisecond'"),
        };
        sql.push_str(&format!(
            "UPDATE posts SET {stamp_sql}, prev_hash = '{prev}', hash = '{hash}' WHERE campaign_id = '{}' AND seq = {seq};\n",
            t.campaign
        ));
        prev = hash;
    }
    t.app.db.execute(&unguarded(backend, &sql)).await;

    // The chain alone holds; the signature does not.
    let audit = t.audit().await;
    assert_eq!(audit["ok"], false, "{audit}");
    let differences = audit["differences"].as_array().unwrap();
    assert!(!differences.iter().any(|d| d["check"] == "chain"), "the rewritten chain is consistent: {audit}");
    assert!(
        differences.iter().any(|d| d["seq"] == 3
            && d["check"] == "receipt"
            && d["detail"].as_str().unwrap().contains("signature does not match")),
        "{audit}"
    );
    assert!(!differences.iter().any(|d| d["seq"] == 2), "post 2 is as it was: {audit}");
    let one = t.app.get(&format!("/v1/campaigns/{}/posts/3/audit?fresh=true", t.campaign)).await;
    let one = one.ok(200);
    assert_eq!(one["ok"], false, "{one}");
    assert!(one["problems"].as_array().unwrap().iter().any(|p| p.as_str().unwrap().contains("signature")), "{one}");

    let dir = tempfile::tempdir().unwrap();
    let file = t.export(dir.path()).await;
    let report = t.verify(&file, None);
    assert!(!report.ok(), "{}", report.text());
    assert!(problems_of(&report, 3).iter().any(|p| p.contains("signature does not match")), "{}", report.text());
    assert!(problems_of(&report, 2).is_empty(), "{}", report.text());
    assert!(!report.problems.iter().any(|p| p.detail.contains("prev_hash")), "{}", report.text());
    assert!(report.text().contains("post 3: its receipt's signature does not match"), "{}", report.text());
}

async fn cut_head(backend: Backend) {
    let t = table(backend).await;
    for i in 0..3 {
        t.post_at(&t.player, 1_001 * i, formation_test()).await;
    }
    // The bot's forum posts: one file per outcome, as the forum shows them.
    let forum = tempfile::tempdir().unwrap();
    let outcomes = t.app.get(&format!("/v1/campaigns/{}/outcomes", t.campaign)).await.ok(200)["outcomes"].clone();
    let outcomes = outcomes.as_array().unwrap();
    assert_eq!(outcomes.len(), 3);
    for (i, o) in outcomes.iter().enumerate() {
        let text = if i % 2 == 0 { &o["text"]["bbcode"] } else { &o["text"]["markdown"] };
        let text = text.as_str().unwrap();
        let hash = t.app.get(&format!("/v1/campaigns/{}/posts/{}", t.campaign, o["seq"])).await.ok(200)["hash"].clone();
        assert!(text.contains(&format!("adjutant:post:{} hash:{}", o["seq"], hash.as_str().unwrap())), "{text}");
        std::fs::write(forum.path().join(format!("reply-{i}.txt")), text).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let whole = t.export(dir.path()).await;
    let report = t.verify(&whole, Some(forum.path()));
    assert!(report.ok(), "{}", report.text());
    assert_eq!(report.forum_texts, 3);

    // The tamperer cuts the last post and its outcome.
    let sql = format!(
        "DELETE FROM outcomes WHERE campaign_id = '{c}' AND seq = 3; DELETE FROM posts WHERE campaign_id = '{c}' AND seq = 3;",
        c = t.campaign
    );
    t.app.db.execute(&unguarded(backend, &sql)).await;
    // What is left is consistent: the database alone cannot tell.
    assert_eq!(t.audit().await["ok"], true);
    let cut = t.export(dir.path()).await;
    let alone = t.verify(&cut, None);
    assert!(alone.ok(), "{}", alone.text());
    // The forum thread can.
    let report = t.verify(&cut, Some(forum.path()));
    assert!(!report.ok(), "{}", report.text());
    assert!(problems_of(&report, 3).iter().any(|p| p.contains("the export ends at post 2")), "{}", report.text());
}

async fn changed_settings(backend: Backend) {
    let t = table(backend).await;
    let view = t.app.get(&format!("/v1/campaigns/{}", t.campaign)).await;
    let view = view.ok(200);
    assert_eq!(view["chain_genesis"], "creation_record");
    let genesis = view["genesis_hash"].as_str().unwrap().to_owned();
    let first = t.post_at(&t.player, 0, note("first")).await;
    assert_eq!(first["prev_hash"], genesis.as_str());
    assert_ne!(genesis, "0".repeat(64));
    t.post_at(&t.player, 1_001, note("second")).await;
    assert_eq!(t.audit().await["ok"], true);

    t.app
        .db
        .execute_on_campaigns(&format!(
            "UPDATE campaigns SET settings = REPLACE(settings, '\"rules_version\":3', '\"rules_version\":1') WHERE id = '{}';",
            t.campaign
        ))
        .await;
    let changed = t.app.get(&format!("/v1/campaigns/{}", t.campaign)).await;
    assert_eq!(changed.ok(200)["settings"]["rules_version"], 1, "{}", changed.text);
    let audit = t.audit().await;
    assert_eq!(audit["ok"], false, "{audit}");
    assert!(audit["differences"].as_array().unwrap().iter().any(|d| d["seq"] == 1 && d["check"] == "chain"), "{audit}");
    let dir = tempfile::tempdir().unwrap();
    let file = t.export(dir.path()).await;
    let report = t.verify(&file, None);
    assert!(problems_of(&report, 1).iter().any(|p| p.contains("genesis")), "{}", report.text());
}

async fn offline(backend: Backend) {
    let t = table(backend).await;
    let rebel = t.rebel.clone();
    t.post_at(&t.player, 0, note("dawn")).await;
    t.post_at(&t.player, 1_001, formation_test()).await;
    t.post_at(&t.player, 2_002, formation_test()).await;
    // A rollback voids post 3.
    t.post_at(&t.moderator, 3_003, json!({"kind": "rollback", "body": {"to_seq": 2, "reason": "wrong unit"}})).await;
    // A topic both sides sealed (revealed) and one only one side has (still hidden).
    let seal =
        |topic: &str, role: &str| json!({"kind": "seal", "body": {"topic": topic, "role": role, "choice": "stay"}});
    t.post_at(&t.player, 4_004, seal("ford", "attacker")).await;
    t.post_at(&rebel, 5_005, seal("ford", "defender")).await;
    t.post_at(&rebel, 6_006, seal("bridge", "defender")).await;
    t.post_at(&t.player, 7_007, formation_test()).await;

    let dir = tempfile::tempdir().unwrap();
    let file = t.export(dir.path()).await;
    let text = std::fs::read_to_string(&file).unwrap();
    let hidden: Vec<&str> = text.lines().filter(|l| l.contains("\"sealed\":true")).collect();
    assert_eq!(hidden.len(), 1, "{text}");
    assert!(hidden[0].contains("\"seq\":7") && hidden[0].contains("\"body\":null"), "{}", hidden[0]);
    let key = t.key.clone();

    // The server is stopped: nothing but the file and the key.
    drop(t);
    let report = verify(&Options { file: file.clone(), keys: vec![key.clone()], forum_texts: None }).unwrap();
    assert!(report.ok(), "{}", report.text());
    assert_eq!((report.posts, report.links, report.signatures), (8, 8, 8), "{}", report.text());
    assert_eq!(report.hashes, 7, "the hidden seal's hash cannot be recomputed: {}", report.text());
    assert_eq!(report.sealed, 1);
    assert!(report.dice >= 3 && report.outcomes >= 3, "{}", report.text());
    assert!(report.text().contains("ok: no problems"), "{}", report.text());

    // Another key than the server's proves nothing.
    let other = "11".repeat(32);
    let report = verify(&Options { file: file.clone(), keys: vec![other], forum_texts: None }).unwrap();
    assert_eq!(report.problems.len(), 8, "{}", report.text());
    assert!(report.problems.iter().all(|p| p.detail.contains("not trusted")), "{}", report.text());

    // A line changed in the file is found, and a file cut short.
    let forged = text.replacen("dawn", "dusk", 1);
    assert_ne!(forged, text);
    std::fs::write(dir.path().join("forged.jsonl"), &forged).unwrap();
    let report =
        verify(&Options { file: dir.path().join("forged.jsonl"), keys: vec![key.clone()], forum_texts: None }).unwrap();
    assert!(problems_of(&report, 1).iter().any(|p| p.contains("hash")), "{}", report.text());
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(dir.path().join("short.jsonl"), lines[..lines.len() - 1].join("\n")).unwrap();
    let report = verify(&Options { file: dir.path().join("short.jsonl"), keys: vec![key], forum_texts: None }).unwrap();
    assert!(report.problems.iter().any(|p| p.detail.contains("cut short")), "{}", report.text());
}

/// The scripted Short ACW campaign (the rules crate's test data), played over HTTP, exported
/// and replayed offline: every battle's result number, every reinforcement roll and every state.
async fn managed_offline(backend: Backend) {
    let g = Game::start(TestApp::spawn(backend).await, "Short ACW", json!({})).await;
    let script = g.script;
    for i in 0..script.len() {
        g.step(i).await;
    }
    let Game { app, campaign, .. } = g;
    let keys = app.get("/v1/keys").await.ok(200).clone();
    let key = keys["keys"][0]["public_key"].as_str().unwrap().to_owned();
    let answer = app.client.get(format!("{}/v1/campaigns/{campaign}/export", app.base)).send().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, answer.text().await.unwrap()).unwrap();
    drop(app);
    let report = verify(&Options { file: file.clone(), keys: vec![key.clone()], forum_texts: None }).unwrap();
    assert!(report.ok(), "{}", report.text());
    assert_eq!(report.posts, script.len() as i64, "{}", report.text());
    assert!(report.result_numbers > 0 && report.snapshots > 0, "{}", report.text());

    // A stored state changed in the file is found by the replay.
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text.lines().find(|l| l.starts_with("{\"type\":\"snapshot\"")).unwrap();
    let record: Value = adjutant_e2e::serde_json::from_str(line).unwrap();
    let mut state: Value = adjutant_e2e::serde_json::from_str(record["state"].as_str().unwrap()).unwrap();
    state["turn"] = json!(99);
    let forged_line = json!({"type": "snapshot", "seq": record["seq"], "state": state.to_string()}).to_string();
    std::fs::write(dir.path().join("forged.jsonl"), text.replacen(line, &forged_line, 1)).unwrap();
    let report =
        verify(&Options { file: dir.path().join("forged.jsonl"), keys: vec![key.clone()], forum_texts: None }).unwrap();
    let seq = record["seq"].as_i64().unwrap();
    assert!(problems_of(&report, seq).iter().any(|p| p.contains("stored state differs")), "{}", report.text());

    // A post of a managed campaign passed off as an unrevealed sealed choice (its body withheld,
    // so the replay would take its stored state on trust): found.
    let line = text.lines().find(|l| l.starts_with("{\"type\":\"post\"") && l.contains("\"kind\":\"attack\"")).unwrap();
    let mut record: Value = adjutant_e2e::serde_json::from_str(line).unwrap();
    record["body"] = Value::Null;
    record["sealed"] = json!(true);
    let hidden = dir.path().join("hidden.jsonl");
    std::fs::write(&hidden, text.replacen(line, &record.to_string(), 1)).unwrap();
    let report = verify(&Options { file: hidden, keys: vec![key.clone()], forum_texts: None }).unwrap();
    let seq = record["seq"].as_i64().unwrap();
    assert!(problems_of(&report, seq).iter().any(|p| p.contains("withheld")), "{}", report.text());

    // A second campaign line before the end, to replay the last post under other settings: found.
    let campaign_line = text.lines().find(|l| l.starts_with("{\"type\":\"campaign\"")).unwrap();
    let end_line = text.lines().find(|l| l.starts_with("{\"type\":\"end\"")).unwrap();
    let twice = dir.path().join("twice.jsonl");
    std::fs::write(&twice, text.replacen(end_line, &format!("{campaign_line}\n{end_line}"), 1)).unwrap();
    let report = verify(&Options { file: twice, keys: vec![key.clone()], forum_texts: None }).unwrap();
    assert!(report.problems.iter().any(|p| p.detail.contains("second campaign line")), "{}", report.text());

    // Without --key the file's own keys are used, and the verdict says what that proves.
    let report = verify(&Options { file, keys: vec![], forum_texts: None }).unwrap();
    assert!(report.ok(), "{}", report.text());
    assert!(report.text().contains("prove nothing until you pass the server's public key"), "{}", report.text());
}

async fn guards(backend: Backend) {
    let t = table(backend).await;
    t.post_at(&t.player, 0, note("one")).await;
    let c = &t.campaign;
    for sql in [
        format!("UPDATE campaigns SET name = 'Renamed' WHERE id = '{c}'"),
        format!("UPDATE campaigns SET settings = '{{}}' WHERE id = '{c}'"),
        format!("UPDATE campaigns SET chain_genesis = 'legacy' WHERE id = '{c}'"),
        format!("DELETE FROM campaigns WHERE id = '{c}'"),
    ] {
        let refused = t.app.db.try_execute(&sql).await;
        let error = refused.expect_err(&sql);
        assert!(error.contains("never changes") || error.contains("never deleted"), "{sql}: {error}");
    }
    if backend == Backend::Postgres {
        for table in ["campaigns", "posts", "outcomes", "snapshots", "acknowledgements"] {
            let refused = t.app.db.try_execute(&format!("TRUNCATE {table} CASCADE")).await;
            assert!(refused.expect_err(table).contains("cannot be truncated"), "{table}");
        }
    } else {
        // SQLite has no TRUNCATE; its `DELETE FROM` without WHERE runs the row triggers.
        let refused = t.app.db.try_execute("DELETE FROM posts").await;
        assert!(refused.unwrap_err().contains("append-only"));
    }
    assert_eq!(t.audit().await["ok"], true);
}

mod independent {
    use super::*;

    /// A receipt checked by OpenSSL, from nothing but the documented signed text and the public
    /// key from `GET /v1/keys`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn openssl_verifies_a_receipt_from_the_documented_bytes() {
        let t = table(Backend::Sqlite).await;
        let post = t.post_at(&t.player, 0, formation_test()).await;
        let receipt = &post["receipt"];
        let signed = format!(
            "adjutant-receipt-v1\n{}\n{}\n{}\n{}",
            t.campaign,
            post["seq"],
            post["stamp"].as_str().unwrap(),
            post["hash"].as_str().unwrap()
        );
        assert_eq!(receipt["signed_text"], signed.as_str());
        let keys = t.app.get("/v1/keys").await.ok(200).clone();
        assert_eq!(receipt["key_id"], keys["keys"][0]["key_id"]);

        let dir = tempfile::tempdir().unwrap();
        // SubjectPublicKeyInfo for Ed25519 (RFC 8410): a fixed 12-byte prefix and the 32 bytes.
        let der = [hex("302a300506032b6570032100"), hex(&t.key)].concat();
        std::fs::write(dir.path().join("key.der"), der).unwrap();
        std::fs::write(dir.path().join("signature"), hex(receipt["signature"].as_str().unwrap())).unwrap();
        std::fs::write(dir.path().join("signed"), &signed).unwrap();
        std::fs::write(dir.path().join("forged"), signed.replace("\n1\n", "\n2\n")).unwrap();
        let check = |message: &str| {
            std::process::Command::new("openssl")
                .current_dir(dir.path())
                .args(["pkeyutl", "-verify", "-pubin", "-keyform", "DER", "-inkey", "key.der", "-rawin"])
                .args(["-in", message, "-sigfile", "signature"])
                .output()
                .expect("openssl is installed (scripts/test.sh installs it)")
        };
        let good = check("signed");
        assert!(
            good.status.success(),
            "{}{}",
            String::from_utf8_lossy(&good.stdout),
            String::from_utf8_lossy(&good.stderr)
        );
        assert!(String::from_utf8_lossy(&good.stdout).contains("Signature Verified Successfully"));
        assert!(!check("forged").status.success(), "OpenSSL must refuse a changed message");
    }

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
    }
}

mod roles {
    use adjutant_e2e::postgres_admin_url;
    use sqlx::Connection;

    async fn run(url: &str, sql: &str) -> Result<(), String> {
        let mut conn = sqlx::PgConnection::connect(url).await.map_err(|e| e.to_string())?;
        sqlx::raw_sql(sql).execute(&mut conn).await.map(|_| ()).map_err(|e| e.to_string())
    }

    /// docs/hosting.md, "The database guards the record itself": the owner runs the migrations,
    /// the service starts under a role of its own and cannot lift the guards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_service_role_runs_without_owning_the_log() {
        let Some(admin) = postgres_admin_url() else { return };
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(base, _)| base).to_owned();
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let (owner, service, db) = (format!("owner_{tag}"), format!("service_{tag}"), format!("adjutant_roles_{tag}"));
        let url_as = |role: &str| adjutant_e2e::url_as(&format!("{base}/{db}"), role);
        for sql in [
            format!("CREATE ROLE {owner} LOGIN"),
            format!("CREATE ROLE {service} LOGIN"),
            format!("CREATE DATABASE {db} OWNER {owner}"),
        ] {
            run(&admin, &sql).await.unwrap();
        }
        let admin_db = format!("{base}/{db}");
        run(
            &admin_db,
            &format!(
                "ALTER SCHEMA public OWNER TO {owner}; REVOKE CREATE ON SCHEMA public FROM PUBLIC;
                 GRANT USAGE, CREATE ON SCHEMA public TO {service};"
            ),
        )
        .await
        .unwrap();
        let outcome = async {
            // The owner migrates …
            adjutant_server::open_store(&url_as(&owner)).await?;
            run(
                &url_as(&owner),
                &format!(
                    "GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {service};
                     GRANT UPDATE ON principals, webhooks, webhook_outbox TO {service};
                     GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {service};"
                ),
            )
            .await?;
            // … the service starts on the migrated schema …
            let store = adjutant_server::open_store(&url_as(&service)).await?;
            store.ping().await.map_err(|e| e.to_string())?;
            // … and cannot lift a guard, truncate or drop.
            let mut refusals = Vec::new();
            for sql in ["ALTER TABLE posts DISABLE TRIGGER posts_append_only", "TRUNCATE posts", "DROP TABLE outcomes"]
            {
                refusals.push(run(&url_as(&service), sql).await.expect_err(sql));
            }
            Ok::<_, String>(refusals)
        }
        .await;
        for sql in
            [format!("DROP DATABASE {db} WITH (FORCE)"), format!("DROP ROLE {owner}"), format!("DROP ROLE {service}")]
        {
            let _ = run(&admin, &sql).await;
        }
        let refusals = outcome.unwrap();
        assert!(refusals[0].contains("must be owner"), "{refusals:?}");
        assert!(refusals[1].contains("permission denied"), "{refusals:?}");
        assert!(refusals[2].contains("must be owner"), "{refusals:?}");
    }
}
