//! Backups taken while players post, restored and proved to be the log as it stood; and a
//! group's whole database moved from SQLite to PostgreSQL and back with `adjutant copy`.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{postgres_admin_url, require_postgres, Backend, Game, TestApp, TestDb};
use adjutant_server::backup::{self, Head};
use adjutant_server::config::Config;

/// A post the server acknowledged: when it was sent and when the answer came.
#[derive(Debug, Clone)]
struct Acked {
    campaign: String,
    seq: i64,
    hash: String,
    sent: Instant,
    answered: Instant,
}

/// Sixteen clients posting resolutions to two campaigns until stopped.
struct Posting {
    acked: Arc<Mutex<Vec<Acked>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    clients: Vec<tokio::task::JoinHandle<()>>,
}

impl Posting {
    fn start(app: &Arc<TestApp>, moderator: &str, campaigns: &[String]) -> Self {
        let acked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let clients = (0..16)
            .map(|i| {
                let (app, acked, stop) = (app.clone(), acked.clone(), stop.clone());
                let (moderator, campaign) = (moderator.to_owned(), campaigns[i % campaigns.len()].clone());
                tokio::spawn(async move {
                    let action =
                        json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B"}}});
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let sent = Instant::now();
                        let answer = app.post(&moderator, &campaign, action.clone()).await;
                        let post = answer.ok(201);
                        acked.lock().unwrap().push(Acked {
                            campaign: campaign.clone(),
                            seq: post["seq"].as_i64().unwrap(),
                            hash: post["hash"].as_str().unwrap().to_owned(),
                            sent,
                            answered: Instant::now(),
                        });
                    }
                })
            })
            .collect();
        Self { acked, stop, clients }
    }

    fn acked(&self) -> Vec<Acked> {
        self.acked.lock().unwrap().clone()
    }

    async fn until_acked(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.acked.lock().unwrap().len() < count {
            assert!(Instant::now() < deadline, "fewer than {count} posts acknowledged in 30 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn stop(self) -> Vec<Acked> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for client in self.clients {
            client.await.expect("a posting client failed");
        }
        self.acked.lock().unwrap().clone()
    }
}

/// A server stamping by the machine's clock, a moderator, and two resolver campaigns.
async fn busy_server(backend: Backend) -> (Arc<TestApp>, String, Vec<String>) {
    let app = TestApp::spawn_on_system_clock(TestDb::new(backend).await, |_| {}).await;
    let moderator = app.moderator().await;
    let mut campaigns = Vec::new();
    for name in ["Gettysburg table", "Antietam table"] {
        campaigns.push(app.campaign(&moderator, json!({"name": name, "ruleset": "acw-25mm"})).await);
    }
    (Arc::new(app), moderator, campaigns)
}

/// The configuration the tests' servers run with: their scenarios and their receipt key.
fn config_of(app: &TestApp) -> Config {
    (*app.state.config).clone()
}

/// A server on the restored database `db` holds every post acknowledged before the backup
/// began, under the same hash, and every campaign's fresh audit passes with the printed head.
async fn restored_holds(db: TestDb, before: &[Acked], heads: &[Head]) {
    let store = db.store().await;
    for post in before {
        let id = post.campaign.parse().unwrap();
        let stored = store.post(id, post.seq).await.unwrap();
        assert_eq!(stored.map(|p| p.hash), Some(post.hash.clone()), "post {} of {} is not restored", post.seq, id);
    }
    drop(store);
    let restored = TestApp::spawn_on(db, |_| {}).await;
    for head in heads {
        let audit = restored.get(&format!("/v1/campaigns/{}/audit?fresh=true", head.campaign_id)).await;
        let audit = audit.ok(200);
        assert_eq!(audit["ok"], true, "{audit}");
        assert_eq!(audit["posts"], head.seq, "{audit}");
        assert_eq!(audit["head_hash"].as_str(), head.hash.as_deref(), "{audit}");
        let acked_before = before.iter().filter(|p| p.campaign == head.campaign_id.to_string());
        assert!(acked_before.map(|p| p.seq).max().unwrap_or(0) <= head.seq);
    }
}

/// Enough rows beside the log that a backup takes a while, so posting is seen to go on during
/// it: scenario texts uploaded by the moderator, 48 MB in all.
async fn ballast(db: &TestDb) {
    db.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 48)
         INSERT INTO scenarios (moderator_id, id, name, title, text, created_at)
         SELECT (SELECT id FROM principals WHERE kind = 'moderator'), printf('%064d', i), 'ballast', 'Ballast',
                hex(randomblob(512 * 1024)), 0 FROM n",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_backups_taken_while_sixteen_clients_post_restore_whole() {
    let (app, moderator, campaigns) = busy_server(Backend::Sqlite).await;
    ballast(&app.db).await;
    let dir = tempfile::tempdir().unwrap();
    let posting = Posting::start(&app, &moderator, &campaigns);
    posting.until_acked(40).await;
    let mut taken = Vec::new();
    for round in 1..=2 {
        let before = posting.acked();
        let began = Instant::now();
        let dest = dir.path().join(format!("adjutant-{round}.db"));
        let made = backup::backup(&app.db.url, &dest).await.expect("backup");
        let ended = Instant::now();
        // Posting went on while the copy was read: posts sent after it began were answered
        // before it ended.
        let during = posting.acked().iter().filter(|p| p.sent > began && p.answered < ended).count();
        assert!(during > 0, "no post was acknowledged during a backup of {:?}", made.elapsed);
        let printed = made.text();
        assert!(printed.contains(&format!("backup {}: 2 campaigns", dest.display())), "{printed}");
        assert_eq!(backup::parse_heads(&printed).unwrap(), made.heads);
        assert!(!dir.path().read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains("partial")));
        taken.push((dest, before, made.heads));
        posting.until_acked(posting.acked().len() + 40).await;
    }
    let all = posting.stop().await;
    let (first, second) = (taken[0].2.clone(), taken[1].2.clone());
    assert!(first.iter().zip(&second).all(|(a, b)| a.seq < b.seq), "the second backup holds more posts");

    for (dest, before, heads) in taken {
        let check = backup::check_backup(&config_of(&app), dest.to_str().unwrap(), Some(&heads)).await.unwrap();
        assert!(check.ok(), "{}", check.text());
        assert_eq!(check.campaigns.len(), 2);
        // The check reads a copy: the backup itself is left as it was, without a WAL beside it.
        assert!(!Path::new(&format!("{}-wal", dest.display())).exists());
        let mut db = TestDb::new(Backend::Sqlite).await;
        db.signing_key = app.db.signing_key.clone();
        let restored = backup::restore(&db.url, &dest).await.expect("restore");
        assert!(restored.kept.is_none());
        assert_eq!(restored.heads, heads);
        restored_holds(db, &before, &heads).await;
    }
    // A check against heads the backup does not have fails and says which.
    let (dest, heads) = (dir.path().join("adjutant-1.db"), second);
    let check = backup::check_backup(&config_of(&app), dest.to_str().unwrap(), Some(&heads)).await.unwrap();
    assert!(!check.ok());
    assert!(check.text().contains("the head printed at backup is"), "{}", check.text());
    assert!(all.len() > 80);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_is_refused_while_a_server_has_the_database_open() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let moderator = app.moderator().await;
    app.campaign(&moderator, json!({"name": "Table", "ruleset": "acw-25mm"})).await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("b.db");
    backup::backup(&app.db.url, &dest).await.unwrap();
    let refused = backup::restore(&app.db.url, &dest).await.unwrap_err();
    assert!(refused.contains("stop the server first"), "{refused}");
    // Once it is stopped, the restore keeps the database it replaces beside it.
    let db = app.db.clone();
    drop(app);
    // The stopped server's connections close as its tasks wind down.
    let deadline = Instant::now() + Duration::from_secs(10);
    let restored = loop {
        match backup::restore(&db.url, &dest).await {
            Err(e) if e.contains("stop the server first") && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            done => break done.expect("restore"),
        }
    };
    assert!(restored.kept.as_ref().is_some_and(|kept| kept.is_file()), "{restored:?}");
    // On PostgreSQL the database's own tools take the backup.
    let refused = backup::backup("postgres://db/adjutant", &dest).await.unwrap_err();
    assert!(refused.contains("pg_dump"), "{refused}");
}

/// A server whose connections have all gone idle and closed still has the database: the lock
/// file it holds for its life refuses the restore, and lets it through once the server is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_is_refused_while_a_server_holds_the_database_with_every_connection_closed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("adjutant.db").display());
    let store = adjutant_store_sqlite::SqliteStore::open(&url).await.unwrap();
    let dest = dir.path().join("b.db");
    backup::backup(&url, &dest).await.unwrap();
    store.close().await;
    assert!(!adjutant_store_sqlite::backup::in_use(&url).await.unwrap(), "no connection is open");
    let refused = backup::restore(&url, &dest).await.unwrap_err();
    assert!(refused.contains("stop the server first"), "{refused}");
    drop(store);
    let restored = backup::restore(&url, &dest).await.expect("restore once the server is gone");
    assert!(restored.kept.as_ref().is_some_and(|kept| kept.is_file()), "{restored:?}");
}

/// Whether PostgreSQL's `pg_dump` and `pg_restore` are at hand (skipped with a note if not,
/// unless PostgreSQL is required).
fn postgres_tools() -> bool {
    let found = ["pg_dump", "pg_restore"]
        .iter()
        .all(|tool| std::process::Command::new(tool).arg("--version").output().is_ok_and(|out| out.status.success()));
    if !found {
        assert!(!require_postgres(), "ADJUTANT_REQUIRE_POSTGRES=1 but pg_dump or pg_restore is not installed");
        eprintln!("note: pg_dump and pg_restore are not installed; skipping the PostgreSQL backup test");
    }
    found
}

async fn run(program: &str, args: &[&str]) {
    let out = tokio::process::Command::new(program).args(args).output().await.expect(program);
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_dumps_taken_while_sixteen_clients_post_restore_whole() {
    if postgres_admin_url().is_none() || !postgres_tools() {
        return;
    }
    let (app, moderator, campaigns) = busy_server(Backend::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    let posting = Posting::start(&app, &moderator, &campaigns);
    posting.until_acked(40).await;
    let mut taken = Vec::new();
    for round in 1..=2 {
        let before = posting.acked();
        let dump = dir.path().join(format!("adjutant-{round}.dump"));
        let began = Instant::now();
        run("pg_dump", &["-Fc", "-f", dump.to_str().unwrap(), "-d", &app.db.url]).await;
        let ended = Instant::now();
        let during = posting.acked().iter().filter(|p| p.sent > began && p.answered < ended).count();
        assert!(during > 0, "no post was acknowledged during a dump of {:?}", ended - began);
        taken.push((dump, before));
        posting.until_acked(posting.acked().len() + 40).await;
    }
    posting.stop().await;
    for (dump, before) in taken {
        let mut db = TestDb::new(Backend::Postgres).await;
        db.signing_key = app.db.signing_key.clone();
        run("pg_restore", &["--no-owner", "--exit-on-error", "-d", &db.url, dump.to_str().unwrap()]).await;
        let check = backup::check_backup(&config_of(&app), &db.url, None).await.unwrap();
        assert!(check.ok(), "{}", check.text());
        let heads: Vec<Head> = check.campaigns.iter().map(|c| c.head.clone()).collect();
        assert_eq!(heads.len(), 2);
        restored_holds(db, &before, &heads).await;
    }
}

/// A receiver of webhook deliveries that answers 200.
async fn receiver() -> String {
    let app = axum::Router::new().route("/hook", axum::routing::post(|| async { "ok" }));
    format!("{}/hook", adjutant_e2e::serve(app).await)
}

/// Each campaign's export from `app`, written to `dir`.
async fn export(app: &TestApp, campaigns: &[&str], dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for (i, campaign) in campaigns.iter().enumerate() {
        let answer = app.get(&format!("/v1/campaigns/{campaign}/export")).await;
        assert_eq!(answer.status.as_u16(), 200, "{}", answer.text);
        let file = dir.join(format!("{name}-{i}.jsonl"));
        std::fs::write(&file, &answer.text).unwrap();
        files.push(file);
    }
    files
}

/// Every campaign's audit on `app`: its head hash and post count, after checking it passes.
async fn audits(app: &TestApp, campaigns: &[&str]) -> Vec<(Value, Value)> {
    let mut heads = Vec::new();
    for campaign in campaigns {
        let audit = app.get(&format!("/v1/campaigns/{campaign}/audit?fresh=true")).await;
        let audit = audit.ok(200);
        assert_eq!(audit["ok"], true, "{audit}");
        heads.push((audit["posts"].clone(), audit["head_hash"].clone()));
    }
    heads
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_database_moves_to_postgres_and_back_whole() {
    if postgres_admin_url().is_none() {
        return;
    }
    let fast = |config: &mut Config| {
        config.webhook_poll_ms = 20;
        config.webhook_timeout_secs = 1;
    };
    let game = Game::start(TestApp::spawn_with(Backend::Sqlite, fast).await, "Valley", json!({})).await;
    for i in 0..game.script.len() {
        game.step(i).await;
    }
    let app = &game.app;
    // A sealed-delay campaign, whose chain secret is kept in the database, played to its first
    // battles.
    let body = json!({"name": "Aim-proof", "mode": "managed", "scenario": "short-acw",
        "settings": {"result_time": "sealed_delay"}});
    let aim_proof = app.campaign(&game.moderator, body).await;
    let sides = [
        app.player(&game.moderator, &aim_proof, "union").await,
        app.player(&game.moderator, &aim_proof, "confederate").await,
    ];
    for (i, step) in game.script.iter().enumerate().take(13) {
        app.clock.set(step["stamp"].as_str().unwrap().parse().unwrap());
        let token = if step["side"] == "union" { &sides[0] } else { &sides[1] };
        app.post(token, &aim_proof, adjutant_e2e::scripted(i)).await.ok(201);
    }
    // A resolver table with sealed choices, a webhook that is delivered to, and a revoked player.
    let table = app.campaign(&game.moderator, json!({"name": "Melee", "ruleset": "schulz-acw"})).await;
    let union = app.player(&game.moderator, &table, "union").await;
    let rebel = app.player(&game.moderator, &table, "confederate").await;
    let hook = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{table}/webhooks"),
            Some(&game.moderator),
            Some(json!({"url": receiver().await})),
        )
        .await;
    let hook = hook.ok(201)["id"].as_str().unwrap().to_owned();
    let topic = "melee-1-round-2";
    let seal =
        |role: &str, choice: &str| json!({"kind": "seal", "body": {"topic": topic, "role": role, "choice": choice}});
    app.post(&union, &table, seal("attacker", "stay")).await.ok(201);
    app.post(&rebel, &table, seal("defender", "retreat")).await.ok(201);
    let inputs =
        json!({"round": 2, "attacker": {"troops": "infantry", "men": 4}, "defender": {"troops": "infantry", "men": 3}});
    let resolve = json!({"kind": "resolve", "body": {"action": "melee-round", "inputs": inputs, "sealed": topic}});
    app.post(&game.moderator, &table, resolve).await.ok(201);
    let deliveries = format!("/v1/campaigns/{table}/webhooks/{hook}/deliveries");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = app.request(Method::GET, &deliveries, Some(&game.moderator), None).await;
        if answer.ok(200)["deliveries"].as_array().is_some_and(|d| d.len() >= 3) {
            break;
        }
        assert!(Instant::now() < deadline, "the webhook was not delivered to: {}", answer.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let revoked = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{table}/players"),
            Some(&game.moderator),
            Some(json!({"name": "Deserter", "side": "union"})),
        )
        .await;
    let revoked = revoked.ok(201).clone();
    let revoked_token = revoked["token"].as_str().unwrap().to_owned();
    let revoke = format!("/v1/campaigns/{table}/players/{}", revoked["id"].as_str().unwrap());
    app.request(Method::DELETE, &revoke, Some(&game.moderator), None).await.ok(204);
    let heads = audits(app, &[game.campaign.as_str(), aim_proof.as_str(), table.as_str()]).await;
    let exports = tempfile::tempdir().unwrap();
    let key = app.get("/v1/keys").await.ok(200)["keys"][0]["public_key"].as_str().unwrap().to_owned();
    let before =
        export(app, &[game.campaign.as_str(), aim_proof.as_str(), table.as_str()], exports.path(), "before").await;
    let config = config_of(app);
    let source = app.db.clone();
    let (moderator, game_campaign, confederate) =
        (game.moderator.clone(), game.campaign.clone(), game.confederate.clone());
    drop(game);
    let campaigns = [game_campaign.as_str(), aim_proof.as_str(), table.as_str()];

    let mut target = TestDb::new(Backend::Postgres).await;
    target.signing_key = source.signing_key.clone();
    let options = adjutant_server::copy::Options { from: source.url.clone(), to: target.url.clone() };
    let copied = adjutant_server::copy::copy(&config, &options).await.expect("copy");
    let report = copied.text();
    assert!(copied.ok(), "{report}");
    assert!(report.contains("the copy is whole"), "{report}");
    assert_eq!(copied.campaigns.len(), 3, "{report}");
    assert_eq!((copied.live_tokens, copied.revoked_tokens), (7, 1), "{report}");
    let copied_tables = [
        "posts",
        "outcomes",
        "snapshots",
        "campaign_secrets",
        "webhook_outbox",
        "webhook_deliveries",
        "idempotency_keys",
    ];
    for table in copied_tables {
        let (_, rows, _) = copied.tables.iter().find(|(name, _, _)| *name == table).unwrap();
        assert!(*rows > 0, "{table} was empty in the source: {report}");
        assert_eq!(source.count(table).await, target.count(table).await, "{table}");
    }
    // Copying again into the now full database is refused, and changes nothing.
    let refused = adjutant_server::copy::copy(&config, &options).await.unwrap_err();
    assert!(refused.contains("is not empty"), "{refused}");

    let moved = TestApp::spawn_on(target.clone(), |_| {}).await;
    assert_eq!(audits(&moved, &campaigns).await, heads);
    // Exports from both servers verify offline against the one public key, and are the same.
    let after = export(&moved, &campaigns, exports.path(), "after").await;
    for (before, after) in before.iter().zip(&after) {
        for file in [before, after] {
            let options =
                adjutant_server::verify::Options { file: file.clone(), keys: vec![key.clone()], forum_texts: None };
            let report = adjutant_server::verify::verify(&options).unwrap();
            assert!(report.ok(), "{}", report.text());
        }
        // The same records, whichever database they were read from (only the export's time differs).
        let records =
            |file: &Path| std::fs::read_to_string(file).unwrap().lines().skip(1).map(String::from).collect::<Vec<_>>();
        assert!(records(before) == records(after), "{} and {} differ", before.display(), after.display());
    }
    for token in [&moderator, &union, &rebel, &confederate] {
        moved.request(Method::GET, "/v1/campaigns", Some(token), None).await.ok(200);
    }
    moved.request(Method::GET, "/v1/campaigns", Some(&revoked_token), None).await.problem(401, "Authorization");
    // The next post chains on from the copied head, and the campaign list keeps its order.
    let note = json!({"kind": "note", "body": {"text": "after the move"}});
    let next = moved.post(&union, &table, note).await;
    let next = next.ok(201);
    assert_eq!(next["prev_hash"], heads[2].1, "{next}");
    assert_eq!(next["seq"], heads[2].0.as_i64().unwrap() + 1, "{next}");
    let listed = moved.request(Method::GET, "/v1/campaigns", Some(&moderator), None).await;
    let listed: Vec<&str> =
        listed.ok(200)["campaigns"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(listed, campaigns);
    let created = moved.campaign(&moderator, json!({"name": "After", "ruleset": "acw-25mm"})).await;
    drop(moved);

    // And back: PostgreSQL to a new SQLite file.
    let mut back = TestDb::new(Backend::Sqlite).await;
    back.signing_key = source.signing_key.clone();
    let options = adjutant_server::copy::Options { from: target.url.clone(), to: back.url.clone() };
    let copied = adjutant_server::copy::copy(&config, &options).await.expect("copy back");
    assert!(copied.ok(), "{}", copied.text());
    assert_eq!(copied.campaigns.len(), 4);
    let home = TestApp::spawn_on(back, |_| {}).await;
    let after = audits(&home, &[game_campaign.as_str(), aim_proof.as_str(), table.as_str(), created.as_str()]).await;
    assert_eq!(after[..2], heads[..2]);
    assert_eq!(after[2].0, heads[2].0.as_i64().unwrap() + 1);
}

/// The copy's list of tables and columns is the schema the migrations make, on both backends:
/// a table or a column added later and not listed would otherwise be left behind by a move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_copy_lists_every_table_and_column_of_both_schemas() {
    use adjutant_store::transfer::TABLES;
    use std::collections::BTreeSet;
    let listed = |sqlite: bool| -> BTreeSet<(String, String)> {
        TABLES
            .iter()
            .flat_map(|t| {
                t.columns
                    .iter()
                    .map(move |c| (t.name.to_owned(), if sqlite { c.on_sqlite() } else { c.name }.to_owned()))
            })
            .collect()
    };
    let db = TestDb::new(Backend::Sqlite).await;
    drop(db.store().await);
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url).await.unwrap();
    let columns: Vec<(String, String)> = sqlx::query_as(
        "SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(columns.into_iter().collect::<BTreeSet<_>>(), listed(true));
    if postgres_admin_url().is_none() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    drop(db.store().await);
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url).await.unwrap();
    let columns: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(columns.into_iter().collect::<BTreeSet<_>>(), listed(false));
}
