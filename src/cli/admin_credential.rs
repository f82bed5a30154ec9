//! `authrim [--tenant SLUG] admin-credential …`: a tenant's admin API credentials, made,
//! listed and revoked in the database (the server reads them at each admin request, so a
//! revocation holds at once). Audited in the tenant's log, `by`: `cli`.

use super::{print_json, At};
use crate::registry::admin_credentials;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum AdminCredentialCommand {
    /// Create a credential of the tenant; its token (atk_…) is printed once.
    Create {
        /// Who or what holds it (1-100 characters).
        #[arg(long)]
        name: String,
        /// Seconds it stays valid (absent: until revoked).
        #[arg(long)]
        expires_in: Option<u64>,
        /// What it may do: admin (the tenant's admin API, the default) or scim (its SCIM
        /// service only); repeat for both.
        #[arg(long = "scope")]
        scopes: Vec<String>,
    },
    /// The tenant's credentials, revoked ones too (never a secret).
    List,
    /// Revoke one (its id, from `list`): refused from the next request on.
    Revoke { id: String },
}

pub(super) async fn run(db: &crate::db::Database, cmd: AdminCredentialCommand, at: &At) -> anyhow::Result<()> {
    let tenant = at.tenant;
    let audit = |event: &str, detail: serde_json::Value| {
        let e = crate::audit::AuditEvent::new(event).tenant(tenant).detail(detail);
        async move { db.write(move |sql| crate::audit::insert(sql, &[e])).await }
    };
    match cmd {
        AdminCredentialCommand::Create { name, expires_in, scopes } => {
            admin_credentials::validate_name(&name).map_err(anyhow::Error::msg)?;
            let scopes = admin_credentials::validate_scopes((!scopes.is_empty()).then_some(scopes.as_slice())).map_err(anyhow::Error::msg)?;
            if expires_in == Some(0) {
                anyhow::bail!("--expires-in must be positive");
            }
            let expires_at = expires_in.map(|s| crate::util::now().saturating_add(s));
            let (credential, token) = db.write(move |sql| admin_credentials::create(sql, tenant, &name, &scopes, expires_at)).await?;
            audit("admin_credential_created", serde_json::json!({"by": "cli", "id": credential.id, "name": credential.name, "scopes": credential.scopes, "expires_at": expires_at})).await?;
            eprintln!("The token is shown only now; it works on this tenant's admin API ({}/admin/…) only.", at.issuer);
            let mut v = serde_json::to_value(&credential)?;
            v["token"] = token.into();
            print_json(v);
        }
        AdminCredentialCommand::List => print_json(serde_json::to_value(db.read(move |sql| admin_credentials::list(sql, tenant)).await?)?),
        AdminCredentialCommand::Revoke { id } => {
            let owned = id.clone();
            let Some(credential) = db.write(move |sql| admin_credentials::revoke(sql, tenant, &owned)).await? else {
                anyhow::bail!("no admin credential {id:?} in this tenant (admin-credential list)");
            };
            audit("admin_credential_revoked", serde_json::json!({"by": "cli", "id": credential.id, "name": credential.name})).await?;
            print_json(serde_json::to_value(&credential)?);
        }
    }
    Ok(())
}
