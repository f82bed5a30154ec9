//! CIBA user codes (CIBA Core §7.1, `backchannel_user_code_parameter`): a secret the user
//! chooses on the account page and tells the client (a call centre, a shop's terminal), which
//! sends it as `user_code` with each request for them. It keeps someone who only knows the
//! user's name from having requests pushed at the user's device.
//!
//! A client that registered `backchannel_user_code_parameter` must send one (else
//! `missing_user_code`); a code sent is checked whichever client sends it, and a wrong one, or
//! one for a user who set none, is `invalid_user_code`. Codes are stored as Argon2id, as
//! passwords are, and checked on the hashing slots; wrong codes are counted by the login
//! limiter, in a bucket of their own per user (so that a client's guesses cannot lock the
//! user's password sign-in) and one per client, so a code cannot be guessed.

use crate::db::{Database, StoreResult};
use crate::error::OAuthError;
use crate::registry::{Client, User};
use crate::tenant::{Issuer, TenantId};
use crate::util::now;
use axum::http::StatusCode;

/// The shortest and longest codes taken: a PIN of four digits at least; a passphrase at most.
pub const MIN_LENGTH: usize = 4;
pub const MAX_LENGTH: usize = 64;

/// Whether `code` is one a user may choose: `MIN_LENGTH` to `MAX_LENGTH` printable
/// characters, not only spaces.
pub fn acceptable(code: &str) -> bool {
    let n = code.chars().count();
    (MIN_LENGTH..=MAX_LENGTH).contains(&n) && !code.chars().any(char::is_control) && !code.trim().is_empty()
}

/// Store `hash` (`registry::users::argon2_hash` of the code) as `user_id`'s code.
pub async fn set(db: &Database, tenant: TenantId, user_id: &str, hash: String) -> StoreResult<()> {
    let (user_id, t) = (user_id.to_string(), now() as i64);
    db.write(move |sql| {
        sql.execute(
            "INSERT INTO ciba_user_codes (tenant_id, user_id, code_hash, updated_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (tenant_id, user_id) DO UPDATE SET code_hash = excluded.code_hash, updated_at = excluded.updated_at",
            crate::params![i64::from(tenant.0), user_id.as_str(), hash, t],
        )
        .map(|_| ())
    })
    .await
}

/// Remove `user_id`'s code; whether there was one.
pub async fn remove(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<bool> {
    let user_id = user_id.to_string();
    let n = db
        .write(move |sql| sql.execute("DELETE FROM ciba_user_codes WHERE tenant_id = ?1 AND user_id = ?2", crate::params![i64::from(tenant.0), user_id.as_str()]))
        .await?;
    Ok(n > 0)
}

/// The stored hash of `user_id`'s code, if they set one.
pub async fn hash_of(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<Option<String>> {
    let user_id = user_id.to_string();
    let row = db
        .read(move |sql| sql.query_opt("SELECT code_hash FROM ciba_user_codes WHERE tenant_id = ?1 AND user_id = ?2", crate::params![i64::from(tenant.0), user_id.as_str()]))
        .await?;
    row.map(|r| r.text(0)).transpose()
}

fn refuse(code: &'static str, description: &'static str) -> OAuthError {
    OAuthError::invalid_request(description).code_as(code).with_status(StatusCode::BAD_REQUEST)
}

/// The request's `user_code` for `user`, as the endpoint judges it (see the module comment).
pub async fn check(app: &Issuer, client: &Client, user: &User, code: Option<&str>) -> Result<(), OAuthError> {
    let code = match code {
        Some(c) => c,
        None if client.meta.backchannel_user_code_parameter => {
            return Err(refuse("missing_user_code", "this client must send the user's user_code"));
        }
        None => return Ok(()),
    };
    let account = format!("ciba-user-code:{}", user.id);
    let Some(attempt) = app.login_limiter.begin(&account, &format!("client:{}", client.id()), now()) else {
        return Err(refuse("invalid_user_code", "too many wrong user codes for this user: try again later"));
    };
    let stored = match hash_of(&app.db, app.tenant.id, &user.id).await {
        Ok(h) => h,
        Err(e) => {
            attempt.unchecked();
            return Err(OAuthError::internal("ciba user codes", e));
        }
    };
    // A user without a code is checked against a dummy hash, so that the answer takes as long
    // as for one with a code, and says nothing of whether they set one.
    let code = code.to_string();
    let matched = app
        .hash_slots
        .run(move || match stored {
            Some(hash) => crate::registry::users::argon2_matches(&hash, &code),
            None => {
                crate::registry::users::verify_password(None, &code);
                false
            }
        })
        .await;
    match matched {
        Some(true) => {
            attempt.succeeded();
            Ok(())
        }
        Some(false) => {
            attempt.failed(now());
            Err(refuse("invalid_user_code", "the user_code is not this user's"))
        }
        None => {
            attempt.unchecked();
            Err(OAuthError::temporarily_unavailable("the server is busy: try again shortly"))
        }
    }
}
