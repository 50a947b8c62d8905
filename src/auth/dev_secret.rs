//! Where the signing key comes from: the configured secret or public key, or, on the embedded
//! SQLite default only, a random secret kept in `tandem-dev.secret` beside the database file.

use std::{
    io::Write,
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
};

use secrecy::SecretString;

use crate::settings::Settings;

pub const FILE_NAME: &str = "tandem-dev.secret";

/// The key material tokens are checked (or signed) with.
#[derive(Debug, Clone)]
pub enum KeySource {
    Secret(SecretString),
    PublicKey(PathBuf),
}

/// Picks the configured key, or the dev secret file when none is configured on SQLite.
pub fn key_source(settings: &Settings) -> anyhow::Result<KeySource> {
    match configured_key(settings)? {
        Some(key) => Ok(key),
        None => {
            let path = secret_path(settings.database_url.expose());
            let (secret, created) = read_or_create(&path)?;
            if created {
                tracing::warn!(path = %path.display(), "no JWT key configured: created a random dev secret (SQLite only)");
            } else {
                tracing::warn!(path = %path.display(), "no JWT key configured: using the dev secret file (SQLite only)");
            }
            Ok(KeySource::Secret(secret))
        }
    }
}

/// The key the settings configure; `None` where the dev secret file serves (SQLite only).
/// Touches no file.
pub fn configured_key(settings: &Settings) -> anyhow::Result<Option<KeySource>> {
    match (&settings.jwt_secret, &settings.jwt_public_key) {
        (Some(_), Some(_)) => anyhow::bail!("set TANDEM_JWT_SECRET or TANDEM_JWT_PUBLIC_KEY, not both"),
        (Some(secret), None) => Ok(Some(KeySource::Secret(secret.clone()))),
        (None, Some(path)) => Ok(Some(KeySource::PublicKey(path.clone()))),
        (None, None) if settings.database_url.is_postgres() => anyhow::bail!(
            "TANDEM_JWT_SECRET (at least 32 bytes) or TANDEM_JWT_PUBLIC_KEY is required with PostgreSQL; \
             the generated dev secret is only for the embedded SQLite default"
        ),
        (None, None) => Ok(None),
    }
}

/// `sqlite://data/tandem.db?mode=rwc` → `data/tandem-dev.secret`.
pub fn secret_path(database_url: &str) -> PathBuf {
    let file = database_url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let file = file.split('?').next().unwrap_or_default();
    let dir = match Path::new(file).parent() {
        Some(dir) if !file.contains(":memory:") && !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.join(FILE_NAME)
}

fn read_or_create(path: &Path) -> anyhow::Result<(SecretString, bool)> {
    if let Ok(existing) = std::fs::read_to_string(path) {
        let existing = existing.trim().to_string();
        anyhow::ensure!(existing.len() >= 32, "{} holds fewer than 32 bytes", path.display());
        return Ok((SecretString::from(existing), false));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for the dev secret: {e}"))?;
    let secret = crate::encoding::hex(&bytes);
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(secret.as_bytes())?;
    Ok((SecretString::from(secret), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_lives_beside_the_database() {
        assert_eq!(secret_path("sqlite://tandem.db?mode=rwc"), PathBuf::from("./tandem-dev.secret"));
        assert_eq!(secret_path("sqlite:///var/lib/t/x.db"), PathBuf::from("/var/lib/t/tandem-dev.secret"));
        assert_eq!(secret_path("sqlite::memory:"), PathBuf::from("./tandem-dev.secret"));
    }

    #[test]
    fn the_file_is_created_once_with_mode_0600() {
        let dir = std::env::temp_dir().join(format!("tandem-secret-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE_NAME);
        let (first, created) = read_or_create(&path).unwrap();
        assert!(created);
        let (again, created) = read_or_create(&path).unwrap();
        assert!(!created);
        use secrecy::ExposeSecret;
        assert_eq!(first.expose_secret(), again.expose_secret());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
