//! Where the signing key comes from: the configured secret or public key, or, on the embedded
//! SQLite default only, a random secret kept in `tandem-dev.secret` beside the database file.

use std::{
    io::Write,
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
};

use secrecy::SecretString;

use crate::settings::{DatabaseSettings, TokenSettings};

pub const FILE_NAME: &str = "tandem-dev.secret";

/// The key material tokens are checked (or signed) with.
#[derive(Debug, Clone)]
pub enum KeySource {
    Secret(SecretString),
    PublicKey(PathBuf),
    /// The keys an identity provider publishes, read and refreshed while serving.
    Remote(crate::auth::jwks::Location),
}

/// Picks the configured key, or the dev secret file when none is configured on SQLite.
pub fn key_source(tokens: &TokenSettings, database: &DatabaseSettings) -> anyhow::Result<KeySource> {
    match configured_key(tokens, database)? {
        Some(key) => Ok(key),
        None => {
            let path = secret_path(database.database_url.expose());
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
pub fn configured_key(tokens: &TokenSettings, database: &DatabaseSettings) -> anyhow::Result<Option<KeySource>> {
    use crate::auth::jwks::Location;
    let sources = [tokens.jwt_secret.is_some(), tokens.jwt_public_key.is_some(), tokens.jwt_jwks_url.is_some()];
    anyhow::ensure!(
        sources.iter().filter(|set| **set).count() <= 1,
        "set one of TANDEM_JWT_SECRET, TANDEM_JWT_PUBLIC_KEY and TANDEM_JWT_JWKS_URL, not several"
    );
    if let Some(secret) = &tokens.jwt_secret {
        return Ok(Some(KeySource::Secret(secret.clone())));
    }
    if let Some(path) = &tokens.jwt_public_key {
        return Ok(Some(KeySource::PublicKey(path.clone())));
    }
    if let Some(url) = &tokens.jwt_jwks_url {
        return Ok(Some(KeySource::Remote(Location::key_set(url)?)));
    }
    // An issuer that is a URL, and nothing else: its discovery document names the keys.
    if let Some(issuer) = tokens.jwt_issuer.as_deref().filter(|i| i.starts_with("https://") || i.starts_with("http://"))
    {
        return Ok(Some(KeySource::Remote(Location::discovery(issuer)?)));
    }
    anyhow::ensure!(
        !database.database_url.is_postgres(),
        "TANDEM_JWT_SECRET (at least 32 bytes), TANDEM_JWT_PUBLIC_KEY, TANDEM_JWT_JWKS_URL or an https \
         TANDEM_JWT_ISSUER is required with PostgreSQL; the generated dev secret is only for the embedded \
         SQLite default"
    );
    Ok(None)
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
