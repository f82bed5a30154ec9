//! What a new password must be (sign-up; the minimum also binds resets and changes through
//! `users::hash_password`): long enough, not the username, and not in the operator's list of
//! passwords known from breaches (`breached_passwords_file`, one per line, read at start and
//! kept as SHA-256 digests of the lower-cased password).

use std::collections::HashSet;

pub struct PasswordPolicy {
    min_length: usize,
    /// Shared by the tenants whose policies differ in length only: the list is read once.
    breached: std::sync::Arc<HashSet<[u8; 32]>>,
}

/// Why a password is refused: a message id of the pages.
pub type Refusal = &'static str;

impl PasswordPolicy {
    pub fn from_config(config: &crate::config::Config) -> anyhow::Result<Self> {
        let mut breached = HashSet::new();
        if let Some(path) = &config.breached_passwords_file {
            let text = std::fs::read(path).map_err(|e| anyhow::anyhow!("breached_passwords_file {}: {e}", path.display()))?;
            for line in String::from_utf8_lossy(&text).lines().map(str::trim).filter(|l| !l.is_empty()) {
                breached.insert(digest(line));
            }
            tracing::info!(passwords = breached.len(), "breached password list loaded");
        }
        Ok(Self { min_length: config.password_min_length, breached: std::sync::Arc::new(breached) })
    }

    pub fn check(&self, password: &str, username: &str) -> Result<(), Refusal> {
        let n = password.chars().count();
        if n < self.min_length || password.len() > 1024 {
            return Err("password-too-weak");
        }
        if password.eq_ignore_ascii_case(username) {
            return Err("password-is-username");
        }
        if self.breached.contains(&digest(password)) {
            return Err("password-breached");
        }
        Ok(())
    }

    /// This policy with another minimum length (a tenant's `password_min_length`).
    pub fn with_min_length(&self, min_length: usize) -> Self {
        Self { min_length, breached: self.breached.clone() }
    }

    pub fn min_length(&self) -> usize {
        self.min_length
    }
}

fn digest(password: &str) -> [u8; 32] {
    crate::util::sha256(password.to_lowercase().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_named_and_breached_passwords_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("breached.txt");
        std::fs::write(&file, "password123\n\n  Tr0ub4dor&3  \n").unwrap();
        let config = crate::config::Config { breached_passwords_file: Some(file), password_min_length: 10, ..Default::default() };
        let p = PasswordPolicy::from_config(&config).unwrap();
        assert_eq!(p.check("short", "u"), Err("password-too-weak"));
        assert_eq!(p.check("PASSWORD123", "u"), Err("password-breached"), "in any case");
        assert_eq!(p.check("tr0ub4dor&3", "u"), Err("password-breached"));
        assert_eq!(p.check("alice-the-user", "Alice-The-User"), Err("password-is-username"));
        assert_eq!(p.check("correct horse battery", "u"), Ok(()));
    }
}
