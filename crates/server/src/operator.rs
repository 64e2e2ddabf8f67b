//! The operator token: the one secret that creates moderators.
//!
//! It is `ADJUTANT_ADMIN_TOKEN` when that is set, and must then be strong: at least
//! [`MIN_LENGTH`] characters, or the service refuses to start and says how to make one. When it
//! is not set, Adjutant makes a token of 256 random bits on its first start, writes it to
//! `data_dir/admin-token` (readable only by its owner) and shows it once; later starts read it
//! from there. So a newcomer's first start needs no secret of their own invention.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::auth::{new_token, Secret};
use crate::config::Config;

/// The shortest operator token accepted.
pub const MIN_LENGTH: usize = 32;

/// The file, in the data folder, that holds a token Adjutant made.
pub const FILE_NAME: &str = "admin-token";

/// How to make a good token, for messages.
pub const HOW_TO_MAKE_ONE: &str = "make one with `openssl rand -hex 32` (or \
    `head -c 32 /dev/urandom | base64`), or leave ADJUTANT_ADMIN_TOKEN unset and Adjutant makes one \
    in its data folder on the first start";

/// Where the operator token came from.
#[derive(Debug)]
pub enum Origin {
    /// `ADJUTANT_ADMIN_TOKEN`.
    Environment,
    /// The file Adjutant made earlier.
    File(PathBuf),
    /// Made now and written to this file: the caller shows it once.
    Made(PathBuf),
}

/// The operator token of this configuration, made and stored if there is none yet.
pub fn operator_token(config: &Config) -> Result<(Secret, Origin), String> {
    if let Some(token) = &config.admin_token {
        check_strength("ADJUTANT_ADMIN_TOKEN", token.expose())?;
        return Ok((token.clone(), Origin::Environment));
    }
    let path = config.data_dir.join(FILE_NAME);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let token = text.trim();
            check_strength(&path.display().to_string(), token)?;
            Ok((Secret::new(token), Origin::File(path)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = new_token();
            write_secret_file(&path, &token, "the operator token", "ADJUTANT_ADMIN_TOKEN")?;
            Ok((Secret::new(token), Origin::Made(path)))
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Refuses a token too short to be a secret.
pub fn check_strength(source: &str, token: &str) -> Result<(), String> {
    let length = token.chars().count();
    if length < MIN_LENGTH {
        return Err(format!(
            "the operator token in {source} has {length} characters; it must have at least {MIN_LENGTH}: \
             {HOW_TO_MAKE_ONE}"
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("the operator token in {source} has spaces or control characters: {HOW_TO_MAKE_ONE}"));
    }
    Ok(())
}

/// Writes a new file of a secret (`what`, e.g. "the operator token") that only its owner can
/// read, never over an existing one; `instead` says what to set when the folder is not writable.
pub(crate) fn write_secret_file(path: &Path, text: &str, what: &str, instead: &str) -> Result<(), String> {
    let shown = path.display();
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| format!("cannot write {what} to {shown}: {e}; set {instead} or ADJUTANT_DATA_DIR"))?;
    file.write_all(format!("{text}\n").as_bytes()).and_then(|()| file.sync_all()).map_err(|e| format!("{shown}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_in(dir: &Path, env_token: Option<&str>) -> Config {
        let mut config = Config::defaults();
        config.data_dir = dir.join("data");
        config.admin_token = env_token.map(Secret::new);
        config
    }

    #[test]
    fn a_short_token_from_the_environment_is_refused_with_how_to_make_one() {
        let dir = tempfile::tempdir().unwrap();
        let err = operator_token(&config_in(dir.path(), Some("change-me"))).unwrap_err();
        assert!(err.contains("9 characters") && err.contains("at least 32"), "{err}");
        assert!(err.contains("openssl rand -hex 32"), "{err}");
        let err = operator_token(&config_in(dir.path(), Some(&"x".repeat(31)))).unwrap_err();
        assert!(err.contains("31 characters"), "{err}");
        let strong = "k".repeat(32);
        let (token, origin) = operator_token(&config_in(dir.path(), Some(&strong))).unwrap();
        assert_eq!(token.expose(), strong);
        assert!(matches!(origin, Origin::Environment));
        assert!(!dir.path().join("data").exists(), "a token from the environment writes no file");
    }

    #[test]
    fn the_first_start_makes_a_token_and_later_starts_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path(), None);
        let (made, origin) = operator_token(&config).unwrap();
        let Origin::Made(path) = origin else { panic!("expected a new token, got {origin:?}") };
        assert!(made.expose().starts_with("adj_") && made.expose().len() == 68);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let (again, origin) = operator_token(&config).unwrap();
        assert!(matches!(origin, Origin::File(_)), "{origin:?}");
        assert_eq!(again.expose(), made.expose());
    }

    #[test]
    fn a_weak_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path(), None);
        std::fs::create_dir_all(&config.data_dir).unwrap();
        std::fs::write(config.data_dir.join(FILE_NAME), "short\n").unwrap();
        let err = operator_token(&config).unwrap_err();
        assert!(err.contains("admin-token") && err.contains("5 characters"), "{err}");
    }
}
