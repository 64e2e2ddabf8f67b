//! `adjutant`: the Adjutant service.

use std::sync::Arc;

use adjutant_server::clock::SystemClock;
use adjutant_server::config::Config;
use adjutant_server::{open_store_batching, operator, serve, AppState};
use tracing_subscriber::EnvFilter;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `arena_eager_commit` (its fifth option, `mi_option_t` 4, which the bindings leave
/// unnamed): off, so memory is committed as it is used rather than a whole arena at once, which
/// on Linux stays resident once purged (docs/BENCHMARKS.md gives the peak memory either way).
#[cfg(target_os = "linux")]
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Sets the allocator's options before its first arena is made, which is before `main`: the
/// Rust runtime allocates before it calls `main`, and the process's constructors run earlier
/// still.
#[cfg(target_os = "linux")]
extern "C" fn allocator_options() {
    // SAFETY: an option of the allocator, set while no other thread exists.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
}

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static ALLOCATOR_OPTIONS: extern "C" fn() = allocator_options;

const USAGE: &str = "usage: adjutant [serve]
       adjutant bot [options]   (the reference forum bot: adjutant bot --help)
       adjutant verify FILE [--key PUBKEY]... [--forum-texts DIR]
                                (checks a campaign's export offline: adjutant verify --help)
       adjutant rotate-signing-key
                                (a new receipt-signing key from the next start; the old public key stays listed)
       adjutant backup DEST     (a consistent copy of the SQLite database while the server runs)
       adjutant check-backup FILE [--heads HEADS]
                                (replays a backup's every campaign: adjutant backup --help)
       adjutant restore SRC     (puts a backup in place of the stopped server's SQLite database)
       adjutant copy --from URL --to URL
                                (every table into an empty database of either backend: adjutant copy --help)

Starts the Adjutant service. Configuration: config/default.toml (or ADJUTANT_CONFIG), overridden by
ADJUTANT_LISTEN, ADJUTANT_DATABASE_URL, ADJUTANT_ADMIN_TOKEN and the other ADJUTANT_* variables
described in that file. Without ADJUTANT_ADMIN_TOKEN, the first start makes an operator token,
shows it once and keeps it in the data folder (data/admin-token).";

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("serve") => {}
        Some("bot") => return bot(&args[1..]),
        Some("verify") => return verify(&args[1..]),
        Some("rotate-signing-key") => return rotate_signing_key(),
        Some(command @ ("backup" | "check-backup" | "restore")) => return backup(command, &args[1..]),
        Some("copy") => return copy(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            return std::process::ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("adjutant: unknown command {other:?}\n\n{USAGE}");
            return std::process::ExitCode::from(2);
        }
    }
    let config = match Config::load() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("adjutant: configuration: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    init_tracing(&config);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("adjutant: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("adjutant: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn verify(args: &[String]) -> std::process::ExitCode {
    use adjutant_server::verify;
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", verify::USAGE);
        return std::process::ExitCode::SUCCESS;
    }
    let options = match verify::parse_args(args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("adjutant verify: {e}\n\n{}", verify::USAGE);
            return std::process::ExitCode::from(2);
        }
    };
    match verify::verify(&options) {
        Ok(report) => {
            print!("{}", report.text());
            if report.ok() {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("adjutant verify: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

fn rotate_signing_key() -> std::process::ExitCode {
    let result = Config::load().and_then(|config| adjutant_server::signing::rotate(&config));
    match result {
        Ok((old, new)) => {
            println!("retired {old} (still listed at GET /v1/keys); {new} signs from the next start");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("adjutant rotate-signing-key: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `backup`, `check-backup` and `restore`: each prints what it did, and fails with status 1
/// (2 for a wrong command or configuration), so cron mails the failures.
fn backup(command: &str, args: &[String]) -> std::process::ExitCode {
    use adjutant_server::backup;
    use std::process::ExitCode;
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", backup::USAGE);
        return ExitCode::SUCCESS;
    }
    let usage = |e: &str| {
        eprintln!("adjutant {command}: {e}\n\n{}", backup::USAGE);
        ExitCode::from(2)
    };
    let config = match Config::load() {
        Ok(config) => config,
        Err(e) => return usage(&format!("configuration: {e}")),
    };
    let (target, heads) = match args {
        [target] => (target, None),
        [target, flag, heads] if command == "check-backup" && flag == "--heads" => (target, Some(heads)),
        _ => return usage("wrong arguments"),
    };
    let heads = match heads.map(|path| std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))) {
        None => None,
        Some(Ok(text)) => match backup::parse_heads(&text) {
            Ok(heads) => Some(heads),
            Err(e) => return usage(&e),
        },
        Some(Err(e)) => return usage(&e),
    };
    let Some(runtime) = runtime(command) else { return ExitCode::FAILURE };
    let path = std::path::Path::new(target);
    let done = runtime.block_on(async {
        match command {
            "backup" => backup::backup(&config.database_url, path).await.map(|b| (b.text(), true)),
            "restore" => backup::restore(&config.database_url, path).await.map(|r| (r.text(), true)),
            _ => backup::check_backup(&config, target, heads.as_deref()).await.map(|c| (c.text(), c.ok())),
        }
    });
    match done {
        Ok((text, ok)) => {
            print!("{text}");
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("adjutant {command}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn copy(args: &[String]) -> std::process::ExitCode {
    use adjutant_server::copy;
    use std::process::ExitCode;
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", copy::USAGE);
        return ExitCode::SUCCESS;
    }
    let (config, options) = match (Config::load(), copy::parse_args(args)) {
        (Ok(config), Ok(options)) => (config, options),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("adjutant copy: {e}\n\n{}", copy::USAGE);
            return ExitCode::from(2);
        }
    };
    let Some(runtime) = runtime("copy") else { return ExitCode::FAILURE };
    match runtime.block_on(copy::copy(&config, &options)) {
        Ok(report) => {
            print!("{}", report.text());
            if report.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("adjutant copy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime of a command run once; the audit works pages of posts out on every core.
fn runtime(command: &str) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => Some(runtime),
        Err(e) => {
            eprintln!("adjutant {command}: cannot start the runtime: {e}");
            None
        }
    }
}

fn bot(args: &[String]) -> std::process::ExitCode {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{}", adjutant_bot::BOT_USAGE);
        return std::process::ExitCode::SUCCESS;
    }
    let command = match adjutant_bot::parse_command(args, |key| std::env::var(key).ok()) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("adjutant bot: {e}\n\n{}", adjutant_bot::BOT_USAGE);
            return std::process::ExitCode::from(2);
        }
    };
    let filter = EnvFilter::try_from_env("ADJUTANT_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("adjutant bot: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(adjutant_bot::run_command(command)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("adjutant bot: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(mut config: Config) -> Result<(), String> {
    let (operator_token, origin) = operator::operator_token(&config)?;
    config.admin_token = Some(operator_token.clone());
    let store = open_store_batching(&config.database_url, config.max_batch).await?;
    let listener =
        tokio::net::TcpListener::bind(&config.listen).await.map_err(|e| format!("{}: {e}", config.listen))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    match origin {
        operator::Origin::Environment => tracing::info!("operator token: ADJUTANT_ADMIN_TOKEN"),
        operator::Origin::File(path) => tracing::info!("operator token: {}", path.display()),
        operator::Origin::Made(path) => println!(
            "\nAdjutant made an operator token. It is shown only now; it is kept in {path} (readable only by you).\n\n\
             \x20   {token}\n\n\
             Create a moderator with it:\n\n\
             \x20   curl -s -X POST http://{address}/v1/moderators -H 'Authorization: Bearer {token}' \\\n\
             \x20        -H 'Content-Type: application/json' -d '{{\"name\":\"Col. Hawkins\"}}'\n",
            path = path.display(),
            token = operator_token.expose(),
        ),
    }
    let backend = store.backend();
    // Made here on the first start, so it can be said where it is kept.
    let (_, key_origin) = adjutant_server::signing::Keyring::load(&config)?;
    let state = AppState::new(config, store, Arc::new(SystemClock))?;
    let where_kept = match key_origin {
        adjutant_server::signing::Origin::Environment => "ADJUTANT_SIGNING_KEY".to_owned(),
        adjutant_server::signing::Origin::File(path) => path.display().to_string(),
        adjutant_server::signing::Origin::Made(path) => format!("{} (made now)", path.display()),
    };
    for key in state.keys.public_keys() {
        let role = if key.current { "signs receipts" } else { "retired" };
        println!("receipt key {} ({role}, {where_kept}): ed25519 public key {}", key.key_id, key.public_key);
    }
    tracing::info!(%address, backend, "Adjutant is listening; API docs at http://{address}/docs");
    // A task of the runtime's, not the future this thread blocks on: each committed post wakes
    // the webhook deliverer inside `serve`, and a task on the runtime's workers is woken by a push
    // to a queue a running worker takes from, where this thread would be woken by a system call
    // on each side (some 3,000 a second under load).
    match tokio::spawn(serve(listener, state)).await {
        Ok(served) => served.map_err(|e| e.to_string()),
        Err(stopped) if stopped.is_panic() => std::panic::resume_unwind(stopped.into_panic()),
        Err(stopped) => Err(stopped.to_string()),
    }
}

fn init_tracing(config: &Config) {
    let filter = EnvFilter::try_from_env("ADJUTANT_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // `ADJUTANT_LOG_SPANS=close` logs each span's time as it closes: with `adjutant::post=debug`
    // in ADJUTANT_LOG, the steps of every post (the benchmark's breakdown of a post's time).
    let spans = match std::env::var("ADJUTANT_LOG_SPANS").as_deref() {
        Ok("close") => tracing_subscriber::fmt::format::FmtSpan::CLOSE,
        _ => tracing_subscriber::fmt::format::FmtSpan::NONE,
    };
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_span_events(spans);
    if config.log_format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}
