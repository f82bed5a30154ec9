//! `authrim tenant …`: tenants made, listed, shown, changed (settings, style sheet, logo),
//! disabled and deleted, on the database directly as the other admin commands are.

use super::{open_vault, print_json};
use crate::config::Config;
use crate::tenant::rows::State;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum TenantCommand {
    /// Create a tenant, served at {issuer}/t/{slug} (or at its --host).
    Create {
        slug: String,
        /// A host it is served at instead (repeat for several; its issuer is the first's).
        #[arg(long = "host")]
        hosts: Vec<String>,
        /// The name its pages show.
        #[arg(long)]
        product_name: Option<String>,
        /// Its settings, as the admin API's `settings` (JSON; see docs/tenants.md).
        #[arg(long)]
        settings_file: Option<std::path::PathBuf>,
    },
    List,
    Show { slug: String },
    /// Change a tenant's settings: the file's keys replace those stored, `null` clears one
    /// (as `PATCH /admin/tenants/{slug}` with `settings`).
    Set {
        slug: String,
        #[arg(long)]
        settings_file: Option<std::path::PathBuf>,
        /// Its style sheet (the `theme`'s `css`), from a file.
        #[arg(long)]
        css: Option<std::path::PathBuf>,
        /// Its logo (the `theme`'s `logo`), from an .svg or .png file.
        #[arg(long)]
        logo: Option<std::path::PathBuf>,
    },
    /// Stop serving it (404), keeping everything.
    Disable { slug: String },
    Enable { slug: String },
    /// Delete a disabled tenant and all its data; --confirm repeats the slug.
    Delete {
        slug: String,
        #[arg(long)]
        confirm: String,
    },
}

/// Tenants are rows the running servers follow (within a second); a deletion removes the
/// tenant's rows here and now (a running server would too, in the background).
pub(super) async fn run(config: &Config, db: &crate::db::Database, cmd: TenantCommand) -> anyhow::Result<()> {
    use crate::tenant::rows;
    let audit = |event: &str, detail: serde_json::Value| {
        let e = crate::audit::AuditEvent::new(event).detail(detail);
        async move { db.write(move |sql| crate::audit::insert(sql, &[e])).await }
    };
    let find = |slug: String| async move {
        match db.read(move |sql| rows::find(sql, &slug)).await? {
            Some(row) if row.state != State::Deleted => Ok(row),
            _ => Err(anyhow::anyhow!("no such tenant")),
        }
    };
    let shown = |row: &rows::TenantRow| {
        let mut v = serde_json::to_value(row).unwrap_or_default();
        v["issuer"] = crate::tenant::issuer_and_base(config, row).0.into();
        v
    };
    match cmd {
        TenantCommand::Create { slug, hosts, product_name, settings_file } => {
            rows::validate_slug(&slug).map_err(anyhow::Error::msg)?;
            hosts.iter().try_for_each(|h| rows::validate_host(h)).map_err(anyhow::Error::msg)?;
            let mut patch = match &settings_file {
                Some(file) => settings_patch(file)?,
                None => Default::default(),
            };
            if product_name.is_some() {
                patch.product_name = Some(product_name);
            }
            let settings = settled(config, &rows::Overrides::default(), &slug, patch)?;
            let row = db.write(move |sql| rows::create(sql, &slug, &hosts, &settings)).await?;
            audit("tenant_created", serde_json::json!({"by": "cli", "tenant_id": row.id.0, "slug": row.slug})).await?;
            print_json(shown(&row));
        }
        TenantCommand::List => print_json(serde_json::Value::Array(db.read(rows::load_all).await?.iter().map(shown).collect())),
        TenantCommand::Show { slug } => print_json(shown(&find(slug).await?)),
        TenantCommand::Set { slug, settings_file, css, logo } => {
            let mut patch = match &settings_file {
                Some(file) => settings_patch(file)?,
                None => Default::default(),
            };
            let row = find(slug).await?;
            if css.is_some() || logo.is_some() {
                // The files change their part of the theme; the other part stays as stored.
                let mut theme = row.settings.theme.clone().unwrap_or_default();
                if let Some(file) = css {
                    theme.css = Some(std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?);
                }
                if let Some(file) = logo {
                    theme.logo = Some(crate::ui::look::data_url(&file)?);
                }
                patch.theme = Some(Some(theme));
            }
            let (id, settings) = (row.id, settled(config, &row.settings, &row.slug, patch)?);
            // Refused (rows::STALE) if an administrator changed the settings since they were read.
            let based_on = Some(row.settings);
            let row = db.write(move |sql| rows::update(sql, id, rows::Change { settings: Some(settings), based_on, ..Default::default() })).await?;
            // The settings as shown: never an upstream's secret.
            audit("tenant_changed", serde_json::json!({"by": "cli", "tenant_id": id.0, "settings": row.as_ref().map(|r| r.settings.audited())})).await?;
            print_json(row.as_ref().map(shown).unwrap_or_default());
        }
        TenantCommand::Disable { slug } => {
            let id = find(slug).await?.id;
            let row = db.write(move |sql| rows::update(sql, id, rows::Change { state: Some(State::Disabled), ..Default::default() })).await?;
            audit("tenant_changed", serde_json::json!({"by": "cli", "tenant_id": id.0, "state": "disabled"})).await?;
            print_json(row.as_ref().map(shown).unwrap_or_default());
        }
        TenantCommand::Enable { slug } => {
            let id = find(slug).await?.id;
            let row = db.write(move |sql| rows::update(sql, id, rows::Change { state: Some(State::Active), ..Default::default() })).await?;
            audit("tenant_changed", serde_json::json!({"by": "cli", "tenant_id": id.0, "state": "active"})).await?;
            print_json(row.as_ref().map(shown).unwrap_or_default());
        }
        TenantCommand::Delete { slug, confirm } => {
            if confirm != slug {
                anyhow::bail!("deleting a tenant removes all its data: repeat its slug as --confirm");
            }
            let id = find(slug.clone()).await?.id;
            db.write(move |sql| rows::start_deletion(sql, id)).await?;
            audit("tenant_deletion_started", serde_json::json!({"by": "cli", "tenant_id": id.0, "slug": slug})).await?;
            let mut removed = 0;
            loop {
                match db.write(move |sql| rows::purge_batch(sql, id, 500)).await? {
                    0 => break,
                    n => removed += n,
                }
            }
            audit("tenant_deleted", serde_json::json!({"by": "cli", "tenant_id": id.0})).await?;
            eprintln!("deleted tenant {} ({removed} rows)", id.0);
        }
    }
    Ok(())
}

/// A settings change read from `file` (the admin API's `settings`).
fn settings_patch(file: &std::path::Path) -> anyhow::Result<crate::tenant::overrides::SettingsPatch> {
    let text = std::fs::read_to_string(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
}

/// `patch` over `settings`, secrets sealed, checked as the server checks them.
fn settled(config: &Config, settings: &crate::tenant::rows::Overrides, slug: &str, patch: crate::tenant::overrides::SettingsPatch) -> anyhow::Result<crate::tenant::rows::Overrides> {
    let out = patch.apply(settings, slug, &open_vault(config)?);
    let ui = crate::tenant::load_ui(config, &config.product_name)?;
    out.validate(config, ui.languages()).map_err(anyhow::Error::msg)?;
    Ok(out)
}
