//! Configuration: `config/default.toml` (or the file named by `ADJUTANT_CONFIG`), with the
//! environment laid over it: `ADJUTANT_<KEY>` overrides each of the file's keys. Secrets
//! (`ADJUTANT_ADMIN_TOKEN`, `ADJUTANT_SIGNING_KEY`, `ADJUTANT_SMTP_URL`) come only from the
//! environment; a file that names one is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use figment::providers::Serialized;
use figment::value::{Dict, Value};
use figment::Figment;
use serde::{Deserialize, Serialize};

use crate::auth::Secret;

/// The configuration shipped with Adjutant, used when no file is found.
pub const DEFAULT_TOML: &str = include_str!("../../../config/default.toml");

/// Serialized, it is the file's keys and values (the secrets left out), which the environment is
/// laid over.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub listen: String,
    /// A second host:port that serves only `GET /metrics`, with no token; empty: none (the
    /// operator's token reads them on `listen`).
    #[serde(default)]
    pub metrics_listen: String,
    pub database_url: String,
    /// Where Adjutant keeps what is not in the database: the operator token it made.
    pub data_dir: PathBuf,
    pub scenarios_dir: PathBuf,
    pub body_limit_bytes: usize,
    pub request_timeout_secs: u64,
    pub header_read_timeout_secs: u64,
    pub max_connections: usize,
    /// Connections one client address (IPv6: its /64) may hold open at once; connections from a
    /// trusted proxy are not counted. 0 turns it off.
    #[serde(default = "default_max_connections_per_client")]
    pub max_connections_per_client: usize,
    /// An answer that makes no progress for this long ends its connection.
    #[serde(default = "default_send_timeout_secs")]
    pub send_timeout_secs: u64,
    /// An answer the client takes slower than this (bytes a second, over the time the server
    /// waited on it, counted once it has waited `send_rate_window_secs`) ends its connection.
    /// 0 turns it off.
    #[serde(default = "default_min_send_bytes_per_sec")]
    pub min_send_bytes_per_sec: u64,
    #[serde(default = "default_send_rate_window_secs")]
    pub send_rate_window_secs: u64,
    /// The kernel's send buffer of each connection (SO_SNDBUF); 0: the system's own sizing.
    #[serde(default)]
    pub send_buffer_bytes: usize,
    /// The largest request head (request line and headers) one connection may send; a larger one
    /// gets 431.
    #[serde(default = "default_max_header_bytes")]
    pub max_header_bytes: usize,
    /// Bytes of unfinished request heads beyond the first 8 KiB of each, over all connections
    /// together; a connection that would go past it is closed.
    #[serde(default = "default_header_bytes_budget")]
    pub header_bytes_budget: usize,
    /// Bytes of memory the open event streams may take together, over all campaigns: each
    /// stream is charged [`crate::live::IDLE_STREAM_BYTES`] (what an idle stream was measured
    /// to cost the server: about 24 KiB) while it is open, and the posts it has read and not yet
    /// sent while it holds them. Past it, a new stream is refused (503). The default, 384 MiB,
    /// holds some 16,000 idle streams; 0: no bound.
    #[serde(default = "default_event_streams_memory")]
    pub event_streams_memory: usize,
    /// Besides the memory, at most this many event streams open at once (0: no such count).
    #[serde(default)]
    pub max_event_streams: usize,
    /// Bytes one event stream may have written and its client not yet taken (the socket's
    /// send queue, and the posts it has read to send); a follower further behind has its stream
    /// ended, and resumes with `Last-Event-ID`. 0: no bound.
    #[serde(default = "default_event_stream_unsent_bytes")]
    pub event_stream_unsent_bytes: usize,
    /// Event streams one client address may hold open; 0 turns it off.
    #[serde(default = "default_event_streams_per_client")]
    pub event_streams_per_client: usize,
    /// Event streams one token may hold open; 0 turns it off.
    #[serde(default = "default_event_streams_per_token")]
    pub event_streams_per_token: usize,
    /// Exports written at once, over all campaigns.
    #[serde(default = "default_max_exports")]
    pub max_exports: usize,
    /// The most posts one commit carries (group commit); 1 writes each post on its own.
    #[serde(default = "default_max_batch")]
    pub max_batch: usize,
    pub rate_limit_per_minute: u32,
    pub expensive_reads_per_minute: u32,
    pub auth_failures_per_minute: u32,
    pub trusted_proxies: Vec<String>,
    pub notes_per_player_per_day: u32,
    pub seals_per_player_per_day: u32,
    /// Posts of every kind per player per campaign per UTC day (0: no limit).
    #[serde(default = "default_posts_per_player_per_day")]
    pub posts_per_player_per_day: u32,
    /// The most posts a campaign's log holds (0: no limit); past it, every post is refused.
    #[serde(default = "default_max_posts_per_campaign")]
    pub max_posts_per_campaign: u64,
    pub log_format: String,
    /// How often the webhook deliverer looks for due rows when nothing woke it: a fallback,
    /// since each committed post wakes it (`webhook_wake`) and it keeps a timer for the retries
    /// it schedules.
    pub webhook_poll_ms: u64,
    /// Whether a committed post (on this server, or heard from another on PostgreSQL) wakes
    /// the webhook deliverer at once; false: it looks only every `webhook_poll_ms`.
    #[serde(default = "default_webhook_wake")]
    pub webhook_wake: bool,
    /// How often the campaign clock looks for deadlines that have passed.
    #[serde(default = "default_deadline_poll_ms")]
    pub deadline_poll_ms: u64,
    /// How often the campaign clock reads every campaign with deadlines again (posts made by
    /// other replicas); at most a minute, the shortest deadline.
    #[serde(default = "default_deadline_rescan_ms")]
    pub deadline_rescan_ms: u64,
    pub webhook_retry_base_ms: u64,
    pub webhook_retry_cap_ms: u64,
    pub webhook_max_attempts: u32,
    pub webhook_timeout_secs: u64,
    /// Hosts, addresses and CIDR blocks webhooks may reach besides global addresses
    /// (comma-separated; empty by default: nothing inside the network).
    #[serde(default)]
    pub webhook_allow: String,
    /// Webhooks a campaign may have (disabled ones not counted).
    #[serde(default = "default_webhooks_per_campaign")]
    pub webhooks_per_campaign: usize,
    /// Webhook requests in flight at once, across all campaigns.
    #[serde(default = "default_webhook_concurrency")]
    pub webhook_concurrency: usize,
    /// Secrets in each sealed-delay hash chain (`result_time = "sealed_delay"`), recorded in a
    /// campaign's settings when it is created; a longer chain costs more hashing per battle.
    #[serde(default = "default_sealed_delay_chain_length")]
    pub sealed_delay_chain_length: u64,
    #[serde(skip)]
    pub admin_token: Option<Secret>,
    /// Public keys (64 hex digits each, comma-separated) of signing keys retired elsewhere, so
    /// receipts they signed still verify; `data_dir/signing-keys-retired` lists more.
    #[serde(default)]
    pub retired_signing_keys: String,
    /// The receipts' signing key (`ADJUTANT_SIGNING_KEY`, 64 hex digits); when unset, the key
    /// in `data_dir/signing-key`, made on the first start.
    #[serde(skip)]
    pub signing_key: Option<Secret>,
    /// Where turn and reminder mails go out (`ADJUTANT_SMTP_URL`: `smtp://host:25` plain,
    /// `smtp://user:password@host:587?tls=required` STARTTLS, `smtps://…:465` TLS). Unset: no
    /// mail is queued or sent.
    #[serde(skip)]
    pub smtp_url: Option<Secret>,
    /// The mails' sender.
    #[serde(default = "default_mail_from")]
    pub mail_from: String,
    /// How long before a deadline each reminder goes (ISO 8601 durations, comma-separated).
    #[serde(default = "default_reminder_leads")]
    pub reminder_leads: String,
    /// The address players reach the server at (e.g. `https://adjutant.example.org`), for the
    /// link in a mail; unset: mails carry no link.
    #[serde(default)]
    pub public_url: String,
}

fn default_max_connections_per_client() -> usize {
    32
}

fn default_send_timeout_secs() -> u64 {
    20
}

fn default_min_send_bytes_per_sec() -> u64 {
    16 * 1024
}

fn default_send_rate_window_secs() -> u64 {
    10
}

fn default_max_header_bytes() -> usize {
    32 * 1024
}

fn default_header_bytes_budget() -> usize {
    8 * 1024 * 1024
}

fn default_event_streams_memory() -> usize {
    384 * 1024 * 1024
}

fn default_event_stream_unsent_bytes() -> usize {
    1024 * 1024
}

fn default_event_streams_per_client() -> usize {
    8
}

fn default_event_streams_per_token() -> usize {
    4
}

fn default_max_exports() -> usize {
    16
}

fn default_mail_from() -> String {
    "Adjutant <adjutant@localhost>".into()
}

fn default_reminder_leads() -> String {
    "PT24H,PT1H".into()
}

fn default_webhooks_per_campaign() -> usize {
    5
}

fn default_deadline_poll_ms() -> u64 {
    1000
}

fn default_deadline_rescan_ms() -> u64 {
    15_000
}

fn default_webhook_wake() -> bool {
    true
}

fn default_webhook_concurrency() -> usize {
    32
}

fn default_sealed_delay_chain_length() -> u64 {
    adjutant_rules::result_time::DEFAULT_CHAIN_LENGTH
}

impl Config {
    /// Reads the configuration file, then the environment.
    pub fn load() -> Result<Self, String> {
        let (name, text) = match std::env::var("ADJUTANT_CONFIG") {
            Ok(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                (path, text)
            }
            Err(_) => match std::fs::read_to_string("config/default.toml") {
                Ok(text) => ("config/default.toml".to_owned(), text),
                Err(_) => ("(built-in defaults)".to_owned(), DEFAULT_TOML.to_owned()),
            },
        };
        Self::read(&name, &text, |key| std::env::var(key).ok())
    }

    /// The file `name` holding `text`, then the environment that `var` looks variables up in.
    fn read(name: &str, text: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut config = Self::from_toml(text).map_err(|e| format!("{name}: {e}"))?;
        config.apply_env(var)?;
        Ok(config)
    }

    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// The built-in defaults, for tests and embedding.
    pub fn defaults() -> Self {
        Self::from_toml(DEFAULT_TOML).unwrap_or_else(|e| panic!("the shipped config/default.toml is broken: {e}"))
    }

    /// Lays `ADJUTANT_<KEY>` over each of the file's keys, then takes the secrets, which only the
    /// environment holds. Other `ADJUTANT_*` variables (`ADJUTANT_LOG`, the tests' own) are not
    /// keys of the file and are left alone.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        let file = Value::serialize(&*self).map_err(|e| e.to_string())?;
        let (mut texts, mut environment) = (BTreeMap::new(), Dict::new());
        for (key, value) in file.as_dict().into_iter().flatten() {
            if let Some(text) = var(&variable(key)) {
                environment.insert(key.clone(), read_as(value, &text));
                texts.insert(key.as_str(), text);
            }
        }
        let mut config: Config = Figment::from(Serialized::defaults(&file))
            .merge(Serialized::defaults(environment))
            .extract()
            .map_err(|e| match e.path.first().and_then(|key| Some((key, texts.get(key.as_str())?))) {
                Some((key, text)) => format!("{}: cannot read {text:?}", variable(key)),
                None => e.to_string(),
            })?;
        if !(1..=1_000_000).contains(&config.sealed_delay_chain_length) {
            return Err("sealed_delay_chain_length is 1 to 1,000,000".into());
        }
        // An empty secret is unset, as a variable a compose file or unit passes through empty is.
        let secret = |name: &str| var(name).filter(|v| !v.is_empty()).map(Secret::new);
        config.admin_token = secret("ADJUTANT_ADMIN_TOKEN").or_else(|| self.admin_token.take());
        config.signing_key = secret("ADJUTANT_SIGNING_KEY").or_else(|| self.signing_key.take());
        config.smtp_url = secret("ADJUTANT_SMTP_URL").or_else(|| self.smtp_url.take());
        *self = config;
        Ok(())
    }
}

/// The environment variable that overrides the file's `key`.
fn variable(key: &str) -> String {
    format!("ADJUTANT_{}", key.to_ascii_uppercase())
}

/// A variable's text read in the shape of the file's value for its key: a list comma-separated,
/// a number as `str::parse` reads one (the file's numbers are all counts), a switch as `true` or
/// `false`, anything else as it stands. Text that is no number stays text, for the key to refuse by the variable's name.
fn read_as(file_value: &Value, text: &str) -> Value {
    match file_value {
        Value::Array(..) => {
            text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Value::from).collect::<Vec<_>>().into()
        }
        Value::Num(..) => text.parse::<u64>().map_or_else(|_| Value::from(text), Value::from),
        Value::Bool(..) => text.parse::<bool>().map_or_else(|_| Value::from(text), Value::from),
        _ => Value::from(text),
    }
}

fn default_posts_per_player_per_day() -> u32 {
    1000
}

fn default_max_posts_per_campaign() -> u64 {
    1_000_000
}

fn default_max_batch() -> usize {
    adjutant_store::MAX_BATCH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_overrides_the_file() {
        let mut config = Config::defaults();
        assert_eq!(config.listen, "127.0.0.1:8080");
        config
            .apply_env(|key| match key {
                "ADJUTANT_LISTEN" => Some("0.0.0.0:9000".into()),
                "ADJUTANT_DATABASE_URL" => Some("postgres://db/adjutant".into()),
                "ADJUTANT_ADMIN_TOKEN" => Some("s3cret".into()),
                "ADJUTANT_TRUSTED_PROXIES" => Some("10.0.0.0/8, ::1".into()),
                _ => None,
            })
            .unwrap();
        assert_eq!(config.listen, "0.0.0.0:9000");
        assert_eq!(config.database_url, "postgres://db/adjutant");
        assert_eq!(config.trusted_proxies, ["10.0.0.0/8", "::1"]);
        assert_eq!(config.admin_token.as_ref().unwrap().expose(), "s3cret");
        assert_eq!(format!("{:?}", config.admin_token), "Some(Secret(…))");
    }

    #[test]
    fn a_bad_number_is_named() {
        let mut config = Config::defaults();
        let err = config.apply_env(|key| (key == "ADJUTANT_BODY_LIMIT_BYTES").then(|| "lots".into())).unwrap_err();
        assert!(err.contains("ADJUTANT_BODY_LIMIT_BYTES"), "{err}");
    }

    /// An environment of exactly `vars`, so that tests do not share the process's.
    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |key| vars.iter().find(|(name, _)| *name == key).map(|(_, value)| (*value).to_owned())
    }

    /// The shipped file with `key`'s line replaced by `line` (or dropped when it is empty).
    fn file_with(key: &str, line: &str) -> String {
        let prefix = format!("{key} = ");
        let lines = DEFAULT_TOML.lines().map(|l| if l.starts_with(&prefix) { line } else { l });
        lines.collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn the_file_alone_is_read_as_written() {
        let text = file_with("listen", r#"listen = "10.1.2.3:7000""#);
        let config = Config::read("site.toml", &text, env(&[])).unwrap();
        assert_eq!(config.listen, "10.1.2.3:7000");
        assert_eq!(config.body_limit_bytes, 65536);
        assert!(config.trusted_proxies.is_empty());
        assert!(config.admin_token.is_none() && config.signing_key.is_none() && config.smtp_url.is_none());
    }

    #[test]
    fn the_environment_alone_sets_what_the_file_leaves_out() {
        let text = file_with("max_batch", "");
        assert_eq!(Config::read("site.toml", &text, env(&[])).unwrap().max_batch, adjutant_store::MAX_BATCH);
        let vars =
            [("ADJUTANT_MAX_BATCH", "8"), ("ADJUTANT_SMTP_URL", "smtp://mail:25"), ("ADJUTANT_SIGNING_KEY", "ab")];
        let config = Config::read("site.toml", &text, env(&vars)).unwrap();
        assert_eq!(config.max_batch, 8);
        assert_eq!(config.smtp_url.as_ref().unwrap().expose(), "smtp://mail:25");
        assert_eq!(config.signing_key.as_ref().unwrap().expose(), "ab");
    }

    #[test]
    fn each_variable_overrides_its_key_in_the_file() {
        let text = file_with("trusted_proxies", r#"trusted_proxies = ["192.0.2.1"]"#);
        let vars = [
            ("ADJUTANT_DATA_DIR", "/var/lib/adjutant"),
            ("ADJUTANT_BODY_LIMIT_BYTES", "1024"),
            ("ADJUTANT_WEBHOOK_MAX_ATTEMPTS", "3"),
            ("ADJUTANT_SEALED_DELAY_CHAIN_LENGTH", "+50"),
            ("ADJUTANT_TRUSTED_PROXIES", " 10.0.0.0/8 ,, ::1,"),
            ("ADJUTANT_REMINDER_LEADS", "PT2H"),
            ("ADJUTANT_LOG_FORMAT", "json"),
        ];
        let config = Config::read("site.toml", &text, env(&vars)).unwrap();
        assert_eq!(config.data_dir, PathBuf::from("/var/lib/adjutant"));
        assert_eq!(config.body_limit_bytes, 1024);
        assert_eq!(config.webhook_max_attempts, 3);
        assert_eq!(config.sealed_delay_chain_length, 50);
        assert_eq!(config.trusted_proxies, ["10.0.0.0/8", "::1"]);
        assert_eq!(config.reminder_leads, "PT2H");
        assert_eq!(config.log_format, "json");
        // A list set empty in the environment is empty, not the file's.
        let config = Config::read("site.toml", &text, env(&[("ADJUTANT_TRUSTED_PROXIES", "")])).unwrap();
        assert!(config.trusted_proxies.is_empty());
    }

    #[test]
    fn a_bad_value_names_its_variable_and_what_it_read() {
        for (name, value) in [
            ("ADJUTANT_BODY_LIMIT_BYTES", "lots"),
            ("ADJUTANT_MAX_CONNECTIONS", ""),
            ("ADJUTANT_REQUEST_TIMEOUT_SECS", "-1"),
            ("ADJUTANT_RATE_LIMIT_PER_MINUTE", "5000000000"),
            ("ADJUTANT_WEBHOOK_POLL_MS", "1.5"),
            ("ADJUTANT_DEADLINE_POLL_MS", " 100"),
            ("ADJUTANT_WEBHOOK_WAKE", "maybe"),
        ] {
            let err = Config::read("site.toml", DEFAULT_TOML, env(&[(name, value)])).unwrap_err();
            assert_eq!(err, format!("{name}: cannot read {value:?}"));
        }
        let err = Config::read("site.toml", DEFAULT_TOML, env(&[("ADJUTANT_SEALED_DELAY_CHAIN_LENGTH", "0")]));
        assert_eq!(err.unwrap_err(), "sealed_delay_chain_length is 1 to 1,000,000");
    }

    #[test]
    fn the_fair_shares_have_defaults_the_file_names_and_variables() {
        let shipped = Config::defaults();
        let built_in = Config::read("site.toml", &file_with("max_connections_per_client", ""), env(&[])).unwrap();
        assert_eq!(shipped.max_connections_per_client, 32);
        assert_eq!(built_in.max_connections_per_client, 32);
        assert_eq!(
            (shipped.send_timeout_secs, shipped.min_send_bytes_per_sec, shipped.send_rate_window_secs),
            (20, 16384, 10)
        );
        assert_eq!((shipped.max_header_bytes, shipped.header_bytes_budget), (32768, 8 << 20));
        assert_eq!(
            (shipped.event_streams_memory, shipped.max_event_streams, shipped.event_stream_unsent_bytes),
            (384 << 20, 0, 1 << 20)
        );
        assert_eq!((shipped.event_streams_per_client, shipped.event_streams_per_token), (8, 4));
        assert!(shipped.webhook_wake);
        assert_eq!((shipped.max_exports, shipped.send_buffer_bytes), (16, 0));
        let vars = [
            ("ADJUTANT_MAX_CONNECTIONS_PER_CLIENT", "4"),
            ("ADJUTANT_MIN_SEND_BYTES_PER_SEC", "0"),
            ("ADJUTANT_EVENT_STREAMS_PER_TOKEN", "2"),
            ("ADJUTANT_HEADER_BYTES_BUDGET", "65536"),
            ("ADJUTANT_EVENT_STREAMS_MEMORY", "1048576"),
            ("ADJUTANT_MAX_EVENT_STREAMS", "256"),
            ("ADJUTANT_WEBHOOK_WAKE", "false"),
        ];
        let config = Config::read("site.toml", DEFAULT_TOML, env(&vars)).unwrap();
        assert_eq!(config.max_connections_per_client, 4);
        assert_eq!(config.min_send_bytes_per_sec, 0);
        assert_eq!(config.event_streams_per_token, 2);
        assert_eq!(config.header_bytes_budget, 65536);
        assert_eq!((config.event_streams_memory, config.max_event_streams), (1 << 20, 256));
        assert!(!config.webhook_wake);
        // A file written before the memory budget, with only the old count, still reads.
        let old = file_with("event_streams_memory", "").replace("max_event_streams = 0", "max_event_streams = 256");
        let config = Config::read("site.toml", &old, env(&[])).unwrap();
        assert_eq!((config.event_streams_memory, config.max_event_streams), (384 << 20, 256));
    }

    #[test]
    fn other_adjutant_variables_are_not_keys() {
        let vars = [("ADJUTANT_LOG", "debug"), ("ADJUTANT_LOG_SPANS", "1"), ("ADJUTANT_CONFIG", "x.toml")];
        let config = Config::read("site.toml", DEFAULT_TOML, env(&vars)).unwrap();
        assert_eq!(config.log_format, "pretty");
    }

    #[test]
    fn secrets_come_only_from_the_environment() {
        let text = format!("{DEFAULT_TOML}\nadmin_token = \"{}\"\n", "t".repeat(40));
        let err = Config::read("site.toml", &text, env(&[])).unwrap_err();
        assert!(err.starts_with("site.toml: ") && err.contains("unknown field `admin_token`"), "{err}");
        let blank = [("ADJUTANT_ADMIN_TOKEN", ""), ("ADJUTANT_SIGNING_KEY", ""), ("ADJUTANT_SMTP_URL", "")];
        let config = Config::read("site.toml", DEFAULT_TOML, env(&blank)).unwrap();
        assert!(config.admin_token.is_none() && config.signing_key.is_none() && config.smtp_url.is_none());
    }

    #[test]
    fn a_bad_file_is_named_with_the_line_at_fault() {
        let err = Config::read("site.toml", &file_with("max_batch", r#"max_batch = "many""#), env(&[])).unwrap_err();
        assert!(err.starts_with("site.toml: TOML parse error at line"), "{err}");
        assert!(err.contains("max_batch"), "{err}");
    }
}
