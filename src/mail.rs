//! Mail: a durable outbox and the task that delivers it over SMTP (lettre).
//!
//! A message is a row written in the transaction of what it is about (a password reset's
//! token and its mail commit together, or neither does), never sent on the request path. The
//! deliverer claims due rows with a lease (on PostgreSQL, `FOR UPDATE SKIP LOCKED`: several
//! nodes share one outbox), sends, and marks them sent or due again later (doubling waits,
//! `mail_max_attempts` tries). A body can carry a secret link, so it is sealed under the KEK
//! at rest and blanked once sent.

use crate::app::{App, AppState};
use crate::db::{Dialect, Sql, StoreResult};
use crate::tenant::Issuer;
use crate::util::now;
use lettre::message::{Mailbox, Message, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use std::time::Duration;

const POLL: Duration = Duration::from_secs(2);
/// How often the outbox and the expired links are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(600);
const BATCH: i64 = 16;
/// A send in progress keeps its row this long from the others.
const LEASE: i64 = 120;
/// The `due_at` of a message given up: never due.
const GIVEN_UP: i64 = i64::MAX / 2;

/// The SMTP side, when `smtp_url` is set.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    pub wake: tokio::sync::Notify,
}

impl Mailer {
    pub fn from_config(config: &crate::config::Config) -> anyhow::Result<Option<Self>> {
        let Some(url) = config.smtp_url.as_deref().filter(|u| !u.is_empty()) else { return Ok(None) };
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| anyhow::anyhow!("smtp_url: {e}"))?
            .timeout(Some(Duration::from_secs(30)))
            .build();
        let from = match &config.mail_from {
            Some(f) => f.parse::<Mailbox>().map_err(|e| anyhow::anyhow!("mail_from {f:?}: {e}"))?,
            // The product's name as the display name (built, not parsed: a comma or a quote in
            // it is no syntax error), at the issuer's host; an address for an IP issuer.
            None => {
                let host = url::Url::parse(config.base_url()).ok().and_then(|u| u.domain().map(str::to_string)).unwrap_or_else(|| "localhost".into());
                let address = lettre::Address::new("noreply", &host).or_else(|_| lettre::Address::new("noreply", "localhost")).map_err(|e| anyhow::anyhow!("mail_from: {e}"))?;
                Mailbox::new(Some(config.product_name.clone()), address)
            }
        };
        Ok(Some(Self { transport, from, wake: tokio::sync::Notify::new() }))
    }
}

/// A message's body as the outbox keeps it (sealed under the KEK).
fn seal(vault: &crate::keys::Vault, body: &str) -> Vec<u8> {
    vault.seal("mail", body.as_bytes())
}

/// A message for the outbox, in `lang`: its subject (catalogue message `subject`), its body
/// (template `template`, themeable, with `product` and `values`), the body sealed.
pub fn compose(app: &Issuer, lang: &str, subject: &'static str, template: &str, values: serde_json::Value) -> (String, Vec<u8>) {
    // The tenant's name (its `product_name` when it sets one), as its pages show it.
    let product = app.tenant.ui.product().to_string();
    let subject = app.tenant.ui.plain_text(lang, &crate::ui::Msg::new(subject).arg("product", product));
    // Every mail template rendered at start, in every language; a failure now is a bug.
    let body = app.tenant.ui.mail_body(lang, template, values).unwrap_or_else(|e| {
        tracing::error!(template, error = %e, "a mail template failed to render");
        String::new()
    });
    (subject, seal(app.vault(), &body))
}

/// The language of mail to `user`: their `locale` if there is a catalogue for it, else the
/// default.
pub fn language_of(app: &Issuer, user: &crate::registry::User) -> String {
    match user.claims.get("locale").and_then(serde_json::Value::as_str) {
        Some(l) => app.tenant.ui.language(Some(l), None).to_string(),
        // The tenant's default language (its `default_locale` when it sets one).
        None => app.tenant.ui.language(None, None).to_string(),
    }
}

/// Put a message of `tenant` (its body sealed by `seal`) in the outbox, in the caller's
/// transaction.
pub fn enqueue(sql: &mut dyn Sql, tenant: crate::tenant::TenantId, to: &str, subject: &str, sealed_body: Vec<u8>) -> StoreResult<()> {
    let t = now() as i64;
    sql.execute(
        "INSERT INTO mail_outbox (tenant_id, recipient, subject, body, created_at, due_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        crate::params![tenant, to, subject, sealed_body, t],
    )?;
    Ok(())
}

/// Run `f`'s statements and keep them only if `keep`, else undo them (a savepoint rolled
/// back): a request that must change nothing (a sign-up naming a taken address, a reset for
/// nobody, a mail over its recipient's limit) does the same work on the request path as one
/// that changes something, so its time does not tell which it was.
pub fn keep_if<R>(sql: &mut dyn Sql, keep: bool, f: impl FnOnce(&mut dyn Sql) -> StoreResult<R>) -> StoreResult<R> {
    sql.batch("SAVEPOINT keep_if")?;
    let r = f(sql);
    if r.is_err() || !keep {
        sql.batch("ROLLBACK TO SAVEPOINT keep_if")?;
    }
    sql.batch("RELEASE SAVEPOINT keep_if")?;
    r
}

struct Due {
    id: i64,
    /// Whose mail it is.
    tenant: crate::tenant::TenantId,
    to: String,
    subject: String,
    body: Vec<u8>,
    attempts: i64,
}

/// The node's deliverer; runs until aborted (a row being sent keeps its lease and is sent
/// again once it runs out: at most once more, never lost).
pub async fn run(app: AppState) {
    let Some(mailer) = app.mailer.as_ref() else { return };
    // SQLite has one node: a lease still held was this node's before it stopped (a crash in
    // the middle of a send), so the message is due again now, not when the lease runs out.
    // (On PostgreSQL another node may hold it; it waits for the lease.)
    let released = app.db.write(|sql| if sql.dialect() == Dialect::Sqlite { sql.execute("UPDATE mail_outbox SET lease_until = 0 WHERE sent_at IS NULL AND lease_until > 0", &[]) } else { Ok(0) }).await;
    if let Err(e) = released {
        tracing::warn!(error = %e, "mail: cannot release the outbox's leases");
    }
    let mut pruned = tokio::time::Instant::now() - PRUNE_EVERY;
    loop {
        if pruned.elapsed() >= PRUNE_EVERY {
            pruned = tokio::time::Instant::now();
            if let Err(e) = prune(&app).await {
                tracing::warn!(error = %e, "mail: cannot prune the outbox");
            }
        }
        match claim(&app).await {
            Ok(rows) => {
                for row in rows {
                    deliver(&app, mailer, row).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "mail: cannot read the outbox"),
        }
        tokio::select! {
            _ = mailer.wake.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Nothing that requests create grows without bound: delivered and given-up messages are
/// kept `mail_retention` seconds, links only until they expire (a used reset link with them).
pub async fn prune(app: &App) -> StoreResult<u64> {
    let (t, keep) = (now() as i64, app.config.mail_retention as i64);
    app.db
        .write(move |sql| {
            let mut n = sql.execute("DELETE FROM mail_outbox WHERE (sent_at IS NOT NULL AND sent_at < ?1) OR (due_at >= ?2 AND created_at < ?1)", crate::params![t - keep, GIVEN_UP])?;
            n += sql.execute("DELETE FROM password_resets WHERE expires_at <= ?1", crate::params![t])?;
            n += sql.execute("DELETE FROM email_verifications WHERE expires_at <= ?1", crate::params![t])?;
            n += sql.execute("DELETE FROM pending_signups WHERE expires_at <= ?1", crate::params![t])?;
            // An organization's invitations stay listed until they expire, then as long as a
            // delivered mail is kept (an answered one's row tells who accepted it).
            n += sql.execute("DELETE FROM organization_invitations WHERE expires_at < ?1", crate::params![t - keep])?;
            Ok(n)
        })
        .await
}

async fn claim(app: &App) -> StoreResult<Vec<Due>> {
    let t = now() as i64;
    let due = app
        .db
        .read(move |sql| sql.query_opt("SELECT 1 FROM mail_outbox WHERE sent_at IS NULL AND due_at <= ?1 AND lease_until <= ?1 LIMIT 1", crate::params![t]))
        .await?;
    if due.is_none() {
        return Ok(Vec::new());
    }
    let rows = app
        .db
        .write(move |sql| {
            let lock = if sql.dialect() == Dialect::Postgres { " FOR UPDATE SKIP LOCKED" } else { "" };
            sql.query(
                &format!(
                    "UPDATE mail_outbox SET lease_until = ?1, attempts = attempts + 1 WHERE id IN \
                     (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND due_at <= ?2 AND lease_until <= ?2 ORDER BY due_at LIMIT ?3{lock}) \
                     RETURNING id, recipient, subject, body, attempts, tenant_id"
                ),
                crate::params![t + LEASE, t, BATCH],
            )
        })
        .await?;
    rows.iter()
        .map(|r| Ok(Due { id: r.i64(0)?, to: r.text(1)?, subject: r.text(2)?, body: r.blob(3)?, attempts: r.i64(4)?, tenant: r.tenant(5)? }))
        .collect()
}

async fn deliver(app: &App, mailer: &Mailer, row: Due) {
    let outcome = match message(app, mailer, &row) {
        Ok(m) => mailer.transport.send(m).await.map(|_| ()).map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    let (id, t) = (row.id, now() as i64);
    let written = match &outcome {
        Ok(()) => app.db.write(move |sql| sql.execute("UPDATE mail_outbox SET sent_at = ?1, body = ?2, lease_until = 0 WHERE id = ?3", crate::params![t, Vec::<u8>::new(), id])).await,
        Err(e) => {
            let gave_up = row.attempts >= app.config.mail_max_attempts as i64;
            // Waits double from mail_retry_delay (after the first try), at most
            // mail_retry_max_delay.
            let longest = app.config.mail_retry_max_delay.clamp(1, i64::MAX as u64 / 2) as i64;
            let wait = ((app.config.mail_retry_delay.max(1) as i64) << (row.attempts - 1).clamp(0, 12)).min(longest);
            tracing::warn!(id, attempt = row.attempts, error = %e, "mail: not delivered; tried again in {wait} s");
            let due = if gave_up { GIVEN_UP } else { t + wait };
            let (err, to) = (e.clone(), row.to.clone());
            if gave_up {
                tracing::warn!(%to, error = %err, "mail: given up");
                app.audit.record(crate::audit::AuditEvent::new("mail_given_up").tenant(row.tenant).detail(serde_json::json!({"id": id, "error": err}))).await;
            }
            app.db.write(move |sql| sql.execute("UPDATE mail_outbox SET due_at = ?1, lease_until = 0, last_error = ?2 WHERE id = ?3", crate::params![due, err, id])).await
        }
    };
    if let Err(e) = written {
        tracing::warn!(error = %e, "mail: cannot record a delivery");
    }
}

fn message(app: &App, mailer: &Mailer, row: &Due) -> Result<Message, String> {
    let body = app.vault().open_sealed("mail", &row.body).map_err(|e| format!("cannot open the message: {e}"))?;
    let to: Mailbox = row.to.parse().map_err(|e| format!("recipient: {e}"))?;
    // The tenant's own sender when it sets one (`mail_from` in its settings), else ours.
    let from = app.tenants.get(row.tenant).and_then(|t| t.policies.mail_from.clone()).unwrap_or_else(|| mailer.from.clone());
    // A single text/plain part (MIME-Version, charset, transfer encoding) and a Message-ID.
    Message::builder()
        .from(from)
        .to(to)
        .subject(row.subject.clone())
        .message_id(None)
        .singlepart(SinglePart::plain(String::from_utf8_lossy(&body).into_owned()))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_if_keeps_or_undoes_the_same_statements() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let sql = &mut crate::db::SqliteSql(&conn);
        sql.batch("BEGIN").unwrap();
        let n = keep_if(sql, false, |sql| enqueue(sql, Default::default(), "a@example.com", "s", vec![1]).map(|_| 7)).unwrap();
        assert_eq!(n, 7, "the statements ran");
        keep_if(sql, true, |sql| enqueue(sql, Default::default(), "b@example.com", "s", vec![2])).unwrap();
        let failed = keep_if(sql, true, |sql| {
            enqueue(sql, Default::default(), "c@example.com", "s", vec![3])?;
            sql.execute("INSERT INTO no_such_table VALUES (1)", &[])
        });
        assert!(failed.is_err());
        sql.batch("COMMIT").unwrap();
        let kept: Vec<String> = sql.query("SELECT recipient FROM mail_outbox", &[]).unwrap().iter().map(|r| r.text(0).unwrap()).collect();
        assert_eq!(kept, ["b@example.com"], "undone when not kept, and when it failed");
    }
}
