//! The end of a consent: the user (or an operator for them) takes back what an application
//! was allowed. The consent is forgotten, so the next authorization asks again, and every
//! refresh-token family of that user at that application is revoked with the tokens it
//! issued (through each grant's revocation entry, as theft detection does).

use crate::app::App;
use crate::audit::AuditEvent;
use crate::db::StoreResult;
use crate::tenant::TenantId;
use crate::util::now;
use serde_json::json;

/// What a withdrawal undid.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Withdrawn {
    /// Whether a stored consent was forgotten.
    pub consent: bool,
    /// Refresh-token families revoked.
    pub families: usize,
}

pub async fn withdraw(app: &App, tenant: TenantId, user_id: &str, client_id: &str, reason: &str) -> StoreResult<Withdrawn> {
    let consent = app.registry.of(tenant).forget_consent(user_id, client_id).await?;
    let families = app.stores.refresh.revoke_of(tenant, user_id, Some(client_id)).await?;
    let until = now() + crate::tokens::grant_revocation_ttl(app);
    for id in &families {
        app.stores.revocations.revoke(tenant, &crate::tokens::grant_revocation_key(id), until).await?;
    }
    if consent || !families.is_empty() {
        app.audit
            .record(
                AuditEvent::new("consent_withdrawn")
                    .tenant(tenant)
                    .user(user_id)
                    .client(client_id)
                    .detail(json!({"reason": reason, "families_revoked": families.len()})),
            )
            .await;
    }
    Ok(Withdrawn { consent, families: families.len() })
}
