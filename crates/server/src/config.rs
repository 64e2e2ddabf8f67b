//! Configuration: `config/default.toml` (or the file named by `ADJUTANT_CONFIG`), then
//! environment overrides `ADJUTANT_<KEY>`. Secrets come only from the environment.

use std::path::PathBuf;

use serde::Deserialize;

use crate::auth::Secret;

/// The configuration shipped with Adjutant, used when no file is found.
pub const DEFAULT_TOML: &str = include_str!("../../../config/default.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub listen: String,
    pub database_url: String,
    /// Where Adjutant keeps what is not in the database: the operator token it made.
    pub data_dir: PathBuf,
    pub scenarios_dir: PathBuf,
    pub body_limit_bytes: usize,
    pub request_timeout_secs: u64,
    pub header_read_timeout_secs: u64,
    pub max_connections: usize,
    /// The most posts one commit carries (group commit); 1 writes each post on its own.
    #[serde(default = "default_max_batch")]
    pub max_batch: usize,
    pub rate_limit_per_minute: u32,
    pub expensive_reads_per_minute: u32,
    pub auth_failures_per_minute: u32,
    pub trusted_proxies: Vec<String>,
    pub notes_per_player_per_day: u32,
    pub seals_per_player_per_day: u32,
    pub log_format: String,
    pub webhook_poll_ms: u64,
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
        let mut config = Self::from_toml(&text).map_err(|e| format!("{name}: {e}"))?;
        config.apply_env(|key| std::env::var(key).ok())?;
        Ok(config)
    }

    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// The built-in defaults, for tests and embedding.
    pub fn defaults() -> Self {
        Self::from_toml(DEFAULT_TOML).unwrap_or_else(|e| panic!("the shipped config/default.toml is broken: {e}"))
    }

    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        fn parse<T: std::str::FromStr>(key: &str, value: String) -> Result<T, String> {
            value.parse().map_err(|_| format!("{key}: cannot read {value:?}"))
        }
        if let Some(v) = var("ADJUTANT_LISTEN") {
            self.listen = v;
        }
        if let Some(v) = var("ADJUTANT_DATABASE_URL") {
            self.database_url = v;
        }
        if let Some(v) = var("ADJUTANT_DATA_DIR") {
            self.data_dir = v.into();
        }
        if let Some(v) = var("ADJUTANT_SCENARIOS_DIR") {
            self.scenarios_dir = v.into();
        }
        if let Some(v) = var("ADJUTANT_BODY_LIMIT_BYTES") {
            self.body_limit_bytes = parse("ADJUTANT_BODY_LIMIT_BYTES", v)?;
        }
        if let Some(v) = var("ADJUTANT_REQUEST_TIMEOUT_SECS") {
            self.request_timeout_secs = parse("ADJUTANT_REQUEST_TIMEOUT_SECS", v)?;
        }
        if let Some(v) = var("ADJUTANT_HEADER_READ_TIMEOUT_SECS") {
            self.header_read_timeout_secs = parse("ADJUTANT_HEADER_READ_TIMEOUT_SECS", v)?;
        }
        if let Some(v) = var("ADJUTANT_MAX_CONNECTIONS") {
            self.max_connections = parse("ADJUTANT_MAX_CONNECTIONS", v)?;
        }
        if let Some(v) = var("ADJUTANT_RATE_LIMIT_PER_MINUTE") {
            self.rate_limit_per_minute = parse("ADJUTANT_RATE_LIMIT_PER_MINUTE", v)?;
        }
        if let Some(v) = var("ADJUTANT_EXPENSIVE_READS_PER_MINUTE") {
            self.expensive_reads_per_minute = parse("ADJUTANT_EXPENSIVE_READS_PER_MINUTE", v)?;
        }
        if let Some(v) = var("ADJUTANT_AUTH_FAILURES_PER_MINUTE") {
            self.auth_failures_per_minute = parse("ADJUTANT_AUTH_FAILURES_PER_MINUTE", v)?;
        }
        if let Some(v) = var("ADJUTANT_TRUSTED_PROXIES") {
            self.trusted_proxies = v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
        }
        if let Some(v) = var("ADJUTANT_NOTES_PER_PLAYER_PER_DAY") {
            self.notes_per_player_per_day = parse("ADJUTANT_NOTES_PER_PLAYER_PER_DAY", v)?;
        }
        if let Some(v) = var("ADJUTANT_SEALS_PER_PLAYER_PER_DAY") {
            self.seals_per_player_per_day = parse("ADJUTANT_SEALS_PER_PLAYER_PER_DAY", v)?;
        }
        if let Some(v) = var("ADJUTANT_LOG_FORMAT") {
            self.log_format = v;
        }
        if let Some(v) = var("ADJUTANT_MAX_BATCH") {
            self.max_batch = parse("ADJUTANT_MAX_BATCH", v)?;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_POLL_MS") {
            self.webhook_poll_ms = parse("ADJUTANT_WEBHOOK_POLL_MS", v)?;
        }
        if let Some(v) = var("ADJUTANT_DEADLINE_POLL_MS") {
            self.deadline_poll_ms = parse("ADJUTANT_DEADLINE_POLL_MS", v)?;
        }
        if let Some(v) = var("ADJUTANT_DEADLINE_RESCAN_MS") {
            self.deadline_rescan_ms = parse("ADJUTANT_DEADLINE_RESCAN_MS", v)?;
        }
        if let Some(v) = var("ADJUTANT_SMTP_URL").filter(|v| !v.is_empty()) {
            self.smtp_url = Some(Secret::new(v));
        }
        if let Some(v) = var("ADJUTANT_MAIL_FROM") {
            self.mail_from = v;
        }
        if let Some(v) = var("ADJUTANT_REMINDER_LEADS") {
            self.reminder_leads = v;
        }
        if let Some(v) = var("ADJUTANT_PUBLIC_URL") {
            self.public_url = v;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_RETRY_BASE_MS") {
            self.webhook_retry_base_ms = parse("ADJUTANT_WEBHOOK_RETRY_BASE_MS", v)?;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_RETRY_CAP_MS") {
            self.webhook_retry_cap_ms = parse("ADJUTANT_WEBHOOK_RETRY_CAP_MS", v)?;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_MAX_ATTEMPTS") {
            self.webhook_max_attempts = parse("ADJUTANT_WEBHOOK_MAX_ATTEMPTS", v)?;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_TIMEOUT_SECS") {
            self.webhook_timeout_secs = parse("ADJUTANT_WEBHOOK_TIMEOUT_SECS", v)?;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_ALLOW") {
            self.webhook_allow = v;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOKS_PER_CAMPAIGN") {
            self.webhooks_per_campaign = parse("ADJUTANT_WEBHOOKS_PER_CAMPAIGN", v)?;
        }
        if let Some(v) = var("ADJUTANT_WEBHOOK_CONCURRENCY") {
            self.webhook_concurrency = parse("ADJUTANT_WEBHOOK_CONCURRENCY", v)?;
        }
        if let Some(v) = var("ADJUTANT_RETIRED_SIGNING_KEYS") {
            self.retired_signing_keys = v;
        }
        self.signing_key = var("ADJUTANT_SIGNING_KEY").filter(|t| !t.is_empty()).map(Secret::new);
        if let Some(v) = var("ADJUTANT_SEALED_DELAY_CHAIN_LENGTH") {
            self.sealed_delay_chain_length = parse("ADJUTANT_SEALED_DELAY_CHAIN_LENGTH", v)?;
        }
        if !(1..=1_000_000).contains(&self.sealed_delay_chain_length) {
            return Err("sealed_delay_chain_length is 1 to 1,000,000".into());
        }
        self.admin_token = var("ADJUTANT_ADMIN_TOKEN").filter(|t| !t.is_empty()).map(Secret::new);
        Ok(())
    }
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
}
