//! Command line: `serve`, `migrate`, and administration of clients and users without SQL.
//! Admin commands work on the database directly (SQLite or PostgreSQL); running servers pick
//! their changes up within a second (SQLite: the change log) or at once (PostgreSQL: NOTIFY).
//! They act on the default tenant, or on the one `--tenant` (or AUTHRIM_TENANT) names;
//! `authrim tenant …` manages the tenants themselves.

use crate::config::Config;
use crate::registry::{clients, users, UserInput};
use crate::tenant::rows::State;
use crate::tenant::TenantId;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod admin_credential;
mod client;
mod group;
mod tenant;
pub use admin_credential::AdminCredentialCommand;
pub use client::{ClientArgs, ClientCommand};
pub use group::{GroupCommand, RoleCommand};
pub use tenant::TenantCommand;

#[derive(Parser)]
#[command(name = "authrim", version, about = "Authrim: a fast, self-hosted OpenID Connect Provider")]
pub struct Cli {
    /// Configuration file (TOML); also AUTHRIM_CONFIG.
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Let an administration command create a new, empty database where none is (otherwise
    /// it refuses, so that a command run from the wrong directory does not quietly manage a
    /// database no server uses).
    #[arg(long, global = true)]
    pub init: bool,
    /// The tenant (its slug) an administration command acts on; the default tenant when
    /// absent. Also AUTHRIM_TENANT.
    #[arg(long, global = true, env = "AUTHRIM_TENANT")]
    pub tenant: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the server (the default command).
    Serve {
        /// Create a demo client and user and print how to sign in.
        #[arg(long)]
        demo: bool,
    },
    /// Create or upgrade the database schema, then exit.
    Migrate,
    /// Manage OAuth clients.
    #[command(subcommand)]
    Client(ClientCommand),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Groups of users (nestable) and their members.
    #[command(subcommand)]
    Group(GroupCommand),
    /// The roles a client defines and who holds them (users, or groups and their members).
    #[command(subcommand)]
    Role(RoleCommand),
    /// A user's sessions, through the running server's admin API (sessions live in the
    /// server; needs AUTHRIM_ADMIN_TOKEN and the server at AUTHRIM_ISSUER).
    #[command(subcommand)]
    Session(SessionCommand),
    /// A user's second factors (passkeys, TOTP, recovery codes).
    #[command(subcommand)]
    Factor(FactorCommand),
    /// Withdraw a user's consent to a client (its refresh tokens are revoked), through the
    /// running server's admin API.
    WithdrawConsent { user: String, client_id: String },
    /// Create an initial access token for dynamic client registration (POST /register).
    RegistrationToken {
        /// How many clients may register with it.
        #[arg(long, default_value_t = 1)]
        max_uses: u32,
        /// Seconds it stays valid.
        #[arg(long, default_value_t = 86_400)]
        expires_in: u64,
    },
    /// List and rotate signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage the tenants this deployment serves besides the default (issue 31).
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// The tenant's admin API credentials (atk_… tokens good at its admin API only).
    #[command(subcommand)]
    AdminCredential(AdminCredentialCommand),
    /// List security events (newest first).
    Audit {
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only events of this kind (login_failure, refresh_reuse, family_revoked, …).
        #[arg(long)]
        event: Option<String>,
        /// Only events about this user: username, e-mail or id.
        #[arg(long)]
        user: Option<String>,
        /// Only events of this client (its id).
        #[arg(long)]
        client: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user. The password comes from --password or, if absent, stdin.
    Create(UserArgs),
    List,
    /// Show a user, by id, username or e-mail.
    Show { user: String },
    Update { user: String, #[command(flatten)] args: UserArgs },
    Delete { user: String },
}

#[derive(Args, Default)]
pub struct UserArgs {
    #[arg(long)]
    pub username: Option<String>,
    /// Visible in the process list: prefer stdin (--password-stdin).
    #[arg(long)]
    pub password: Option<String>,
    #[arg(long)]
    pub password_stdin: bool,
    #[arg(long)]
    pub email: Option<String>,
    #[arg(long)]
    pub name: Option<String>,
    /// Any standard claim as name=value (JSON values accepted: address={"country":"JP"}).
    #[arg(long = "claim")]
    pub claims: Vec<String>,
    #[arg(long)]
    pub disabled: Option<bool>,
    /// A console role: admin (changes anything) or auditor (sees everything); repeat for
    /// several. On update, the roles given replace the user's (--role "" removes them all).
    #[arg(long = "role")]
    pub roles: Vec<String>,
}

impl UserArgs {
    fn input(self) -> anyhow::Result<UserInput> {
        let password = match (self.password, self.password_stdin) {
            (Some(p), _) => Some(p),
            (None, true) => Some(read_password()?),
            (None, false) => None,
        };
        let mut claims = serde_json::Map::new();
        if let Some(e) = self.email {
            claims.insert("email".into(), e.into());
        }
        if let Some(n) = self.name {
            claims.insert("name".into(), n.into());
        }
        for c in self.claims {
            let (k, v) = c.split_once('=').ok_or_else(|| anyhow::anyhow!("--claim takes name=value, got {c:?}"))?;
            let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
            claims.insert(k.to_string(), value);
        }
        // `--role ""` names no role: the user's roles are cleared.
        let roles = (!self.roles.is_empty()).then(|| self.roles.into_iter().filter(|r| !r.is_empty()).collect());
        Ok(UserInput { username: self.username, password, disabled: self.disabled, roles, claims })
    }
}

#[derive(Subcommand)]
pub enum SessionCommand {
    /// List a user's live sessions (by id, username or e-mail).
    List { user: String },
    /// End a user's sessions (all, or the one with --sid), with back-channel logout.
    End {
        user: String,
        #[arg(long)]
        sid: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum FactorCommand {
    /// List a user's second factors and the recovery codes left (by id, username or e-mail).
    List { user: String },
    /// Enrol a TOTP factor for a user: prints its secret and otpauth:// URI, once.
    Totp {
        user: String,
        /// What the user calls the device.
        #[arg(long, default_value = "Authenticator app")]
        name: String,
    },
    /// Make a new set of ten recovery codes for a user (the old set stops working); printed once.
    RecoveryCodes { user: String },
    /// Remove one factor of a user (its id, from `factor list`).
    Remove { user: String, factor_id: String },
    /// Remove every second factor and recovery code of a user.
    Reset { user: String },
}

#[derive(Subcommand)]
pub enum KeysCommand {
    /// List the signing keys (kid, algorithm, state).
    List,
    /// Start a key rotation: the new key is published now and signs after the publish delay
    /// (AUTHRIM_KEY_PUBLISH_DELAY); running servers pick it up with their key-cache refresh.
    /// Each algorithm rotates on its own.
    Rotate {
        /// The algorithm whose key to rotate: a signing one (RS256, PS256, ES256, EdDSA) or one
        /// of the server's encryption keys (RSA-OAEP-256, ECDH-ES).
        #[arg(long, default_value = "RS256")]
        alg: String,
    },
}

/// A password from standard input: prompted for without echo at a terminal, else its first line.
fn read_password() -> anyhow::Result<String> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Ok(rpassword::prompt_password("password: ")?);
    }
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Which database an administration command works on, said on stderr; and a refusal to
/// create an empty SQLite database unless asked (`--init`, or `migrate`).
fn check_database(config: &Config, command: &Command, init: bool) -> anyhow::Result<()> {
    match &config.database_url {
        Some(url) => {
            let shown = url::Url::parse(url).map(|u| format!("{}:{}{}", u.host_str().unwrap_or("?"), u.port().unwrap_or(5432), u.path())).unwrap_or_default();
            eprintln!("authrim: PostgreSQL database {shown}");
        }
        None => {
            let path = crate::db::db_path(&config.data_dir);
            let shown = std::path::absolute(&path).unwrap_or(path.clone());
            if !path.exists() && !init && !matches!(command, Command::Migrate) {
                anyhow::bail!(
                    "no Authrim database at {} (the data directory is AUTHRIM_DATA_DIR or data_dir, now {:?}). \
                     Run this where the server runs, set AUTHRIM_DATA_DIR, or pass --init to create a new database there.",
                    shown.display(),
                    config.data_dir
                );
            }
            eprintln!("authrim: SQLite database {}", shown.display());
        }
    }
    Ok(())
}

pub fn run_admin(config: &Config, command: Command, init: bool, tenant: Option<&str>) -> anyhow::Result<()> {
    check_database(config, &command, init)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let db = crate::db::Database::open(config).await?;
        let result = match which_tenant(config, &db, tenant).await {
            Ok(at) => admin(config, &db, command, &at).await,
            Err(e) => Err(e),
        };
        db.close().await;
        result
    })
}

/// The tenant a command acts on, and its issuer (where `admin_api` finds it).
struct At {
    tenant: TenantId,
    issuer: String,
}

async fn which_tenant(config: &Config, db: &crate::db::Database, slug: Option<&str>) -> anyhow::Result<At> {
    let Some(slug) = slug.filter(|s| *s != "default") else {
        return Ok(At { tenant: TenantId::DEFAULT, issuer: config.base_url().to_string() });
    };
    let owned = slug.to_string();
    match db.read(move |sql| crate::tenant::rows::find(sql, &owned)).await? {
        Some(row) if matches!(row.state, State::Active | State::Disabled) => Ok(At { tenant: row.id, issuer: crate::tenant::issuer_and_base(config, &row).0 }),
        _ => anyhow::bail!("no tenant {slug:?} (authrim tenant list)"),
    }
}

/// One admin command, on either backend. Each reads or writes in one transaction.
async fn admin(config: &Config, db: &crate::db::Database, command: Command, at: &At) -> anyhow::Result<()> {
    let print = print_json;
    let tenant = at.tenant;
    match command {
        Command::Serve { .. } => unreachable!("serve is not an admin command"),
        Command::Migrate => {
            println!("schema at version {}", db.schema_version().await?);
        }
        Command::Client(cmd) => match cmd {
            ClientCommand::Create(args) => {
                let (mut client, secret) = clients::new_client(args.input()?, &open_vault(config)?).map_err(anyhow::Error::msg)?;
                client.tenant = tenant;
                if let Some(why) = config.profile().refusal(&client.meta) {
                    anyhow::bail!(why);
                }
                let c = client.clone();
                let created = db
                    .write(move |sql| {
                        if clients::load_one(sql, tenant, c.id())?.is_some() {
                            return Ok(false);
                        }
                        if let Some(sp) = &c.meta.saml {
                            let taken = clients::load_all(sql)?.into_iter().any(|o| o.tenant == tenant && o.meta.saml.as_ref().is_some_and(|s| s.entity_id == sp.entity_id));
                            if taken {
                                return Ok(false);
                            }
                        }
                        clients::save(sql, &c).map(|_| true)
                    })
                    .await?;
                if !created {
                    anyhow::bail!("a client {:?} (or a SAML service provider of this entity ID) already exists", client.id());
                }
                let mut v = serde_json::to_value(&client.meta)?;
                if let Some(s) = secret {
                    v["client_secret"] = s.into();
                    eprintln!("The client secret is shown only now: store it safely.");
                }
                print(v);
            }
            ClientCommand::List => {
                let all = db.read(clients::load_all).await?;
                print(serde_json::to_value(all.iter().filter(|c| c.tenant == tenant).map(|c| &c.meta).collect::<Vec<_>>())?)
            }
            ClientCommand::Show { client_id } => print(serde_json::to_value(&find_client(db, tenant, &client_id).await?.meta)?),
            ClientCommand::Update { client_id, args } => {
                let existing = find_client(db, tenant, &client_id).await?;
                let (client, secret) = clients::update_client(&existing, args.input()?, &open_vault(config)?).map_err(anyhow::Error::msg)?;
                if let Some(why) = config.profile().refusal(&client.meta) {
                    anyhow::bail!(why);
                }
                save_client(db, &client).await?;
                let mut v = serde_json::to_value(&client.meta)?;
                if let Some(s) = secret {
                    v["client_secret"] = s.into();
                }
                print(v);
            }
            ClientCommand::Delete { client_id } => {
                let id = client_id.clone();
                if !db.write(move |sql| clients::delete(sql, tenant, &id)).await? {
                    anyhow::bail!("no client {client_id:?}");
                }
                eprintln!("deleted client {client_id}");
            }
            ClientCommand::RotateSecret { client_id } => {
                let (client, secret) = clients::rotate_secret(&find_client(db, tenant, &client_id).await?, &open_vault(config)?).map_err(anyhow::Error::msg)?;
                save_client(db, &client).await?;
                print(serde_json::json!({ "client_id": client_id, "client_secret": secret }));
            }
        },
        Command::User(cmd) => match cmd {
            UserCommand::Create(args) => {
                let mut input = args.input()?;
                if input.password.is_none() {
                    input.password = Some(read_password()?);
                }
                let mut user = users::new_user(input).map_err(anyhow::Error::msg)?;
                user.tenant = tenant;
                let u = user.clone();
                let created = db
                    .write(move |sql| {
                        if users::find(sql, tenant, &u.username)?.is_some() {
                            return Ok(false);
                        }
                        users::save(sql, &u).map(|_| true)
                    })
                    .await?;
                if !created {
                    anyhow::bail!("the login name {:?} belongs to another user", user.username);
                }
                print(serde_json::to_value(&user)?);
            }
            UserCommand::List => print(serde_json::to_value(db.read(users::load_all).await?.into_iter().filter(|u| u.tenant == tenant).collect::<Vec<_>>())?),
            UserCommand::Show { user } => print(serde_json::to_value(find_user(db, tenant, &user).await?)?),
            UserCommand::Update { user, args } => {
                let existing = find_user(db, tenant, &user).await?;
                let updated = users::update_user(&existing, args.input()?).map_err(anyhow::Error::msg)?;
                let u = updated.clone();
                let new_password = existing.password_hash != updated.password_hash;
                db.write(move |sql| {
                    if new_password {
                        crate::endpoints::password_reset::spend_links(sql, u.tenant, &u.id)?;
                    }
                    users::save(sql, &u)
                })
                .await?;
                print(serde_json::to_value(&updated)?);
                // The new password's cutoff refuses every earlier token (the server reads it
                // with the change); the sessions end, and the refresh families are revoked,
                // through the running server, as the admin API's change does.
                if new_password || (updated.disabled && !existing.disabled) {
                    let path = format!("/admin/users/{}/sessions", updated.id);
                    if let Err(e) = admin_api(config, &at.issuer, reqwest::Method::DELETE, &path).await {
                        eprintln!("warning: the user's sessions were not ended ({e}); end them with `authrim session end {}` once the server runs", updated.username);
                    }
                }
            }
            UserCommand::Delete { user } => {
                let existing = find_user(db, tenant, &user).await?;
                let id = existing.id.clone();
                db.write(move |sql| users::delete(sql, tenant, &id)).await?;
                eprintln!("deleted user {}", existing.username);
            }
        },
        Command::Session(cmd) => {
            let (method, user, sid) = match cmd {
                SessionCommand::List { user } => (reqwest::Method::GET, user, None),
                SessionCommand::End { user, sid } => (reqwest::Method::DELETE, user, sid),
            };
            let id = find_user(db, tenant, &user).await?.id;
            let path = match sid {
                Some(sid) => format!("/admin/users/{id}/sessions/{sid}"),
                None => format!("/admin/users/{id}/sessions"),
            };
            if let Some(v) = admin_api(config, &at.issuer, method, &path).await? {
                print(v);
            }
        }
        Command::Factor(cmd) => factor_command(config, db, cmd, at).await?,
        Command::Tenant(cmd) => tenant::run(config, db, cmd).await?,
        Command::AdminCredential(cmd) => admin_credential::run(db, cmd, at).await?,
        Command::Group(cmd) => group::run_group(db, config.directory_limits(), cmd, at).await?,
        Command::Role(cmd) => group::run_role(db, config.directory_limits(), cmd, at).await?,
        Command::WithdrawConsent { user, client_id } => {
            let id = find_user(db, tenant, &user).await?.id;
            if let Some(v) = admin_api(config, &at.issuer, reqwest::Method::DELETE, &format!("/admin/users/{id}/consents/{client_id}")).await? {
                print(v);
            }
        }
        Command::RegistrationToken { max_uses, expires_in } => {
            if max_uses == 0 || expires_in == 0 {
                anyhow::bail!("--max-uses and --expires-in must be positive");
            }
            let expires_at = crate::util::now() + expires_in;
            let token = db.write(move |sql| crate::registry::initial_access::create(sql, tenant, max_uses, expires_at)).await?;
            eprintln!("The token is shown only now; give it to whoever registers the client(s).");
            print(serde_json::json!({"initial_access_token": token, "max_uses": max_uses, "expires_at": expires_at, "expires": crate::util::iso8601(expires_at)}));
        }
        Command::Audit { limit, event, user, client } => {
            // Each event has `time` (ISO 8601, UTC) beside `at` (seconds since the epoch).
            let user_id = match user {
                Some(u) => match db.read({ let u = u.clone(); move |sql| users::find(sql, tenant, &u) }).await? {
                    Some(found) => Some(found.id),
                    None => {
                        // Not an error: a deleted user's id still finds their events.
                        eprintln!("no user {u:?} now (username, e-mail or id); listing events recorded for that id");
                        Some(u)
                    }
                },
                None => None,
            };
            let filter = crate::audit::Filter { tenant, limit, event, user_id, client_id: client, since: None };
            print(serde_json::to_value(db.read(move |sql| crate::audit::list_filtered(sql, &filter)).await?)?);
        }
        Command::Keys(KeysCommand::Rotate { alg }) => {
            let vault = open_vault(config)?;
            let kid = crate::keys::KeyManager::rotate_alg(db, &vault, tenant, &alg).await?;
            print(serde_json::json!({"kid": kid, "alg": alg, "state": "next", "signs_after_seconds": config.key_publish_delay}));
        }
        Command::Keys(KeysCommand::List) => {
            let rows = db
                .read(move |sql| sql.query("SELECT kid, alg, state, created_at FROM signing_keys WHERE tenant_id = ?1 ORDER BY created_at", crate::params![tenant]))
                .await?;
            let keys = rows
                .iter()
                .map(|r| {
                    let created = r.i64(3)?;
                    // `created_at` as stored (seconds), `created` for people (ISO 8601, UTC).
                    Ok(serde_json::json!({"kid": r.text(0)?, "alg": r.text(1)?, "state": r.text(2)?, "created_at": created, "created": crate::util::iso8601(created.max(0) as u64)}))
                })
                .collect::<crate::db::StoreResult<Vec<_>>>()?;
            print(serde_json::Value::Array(keys));
        }
    }
    Ok(())
}

fn print_json(v: serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
}

/// Second factors live in the database (the server reads them at each sign-in), so the CLI
/// works on it directly, and records what it did in the audit log.
async fn factor_command(config: &Config, db: &crate::db::Database, cmd: FactorCommand, at: &At) -> anyhow::Result<()> {
    use crate::factors::{self, recovery, totp};
    let tenant = at.tenant;
    let audit = |event: &str, user: &str, detail: serde_json::Value| {
        let e = crate::audit::AuditEvent::new(event).tenant(tenant).user(user).detail(detail);
        async move { db.write(move |sql| crate::audit::insert(sql, &[e])).await }
    };
    match cmd {
        FactorCommand::List { user } => {
            let u = find_user(db, tenant, &user).await?;
            let list = factors::list(db, u.tenant, &u.id).await?;
            print_json(serde_json::json!({"factors": list, "recovery_codes_left": recovery::remaining(db, u.tenant, &u.id).await?}));
        }
        FactorCommand::Totp { user, name } => {
            let u = find_user(db, tenant, &user).await?;
            let host = url::Url::parse(&at.issuer).ok().and_then(|x| x.host_str().map(str::to_string)).unwrap_or_else(|| "Authrim".into());
            let (id, secret, uri) = totp::enrol(db, &open_vault(config)?, &host, u.tenant, &u.id, &u.username, &name).await?;
            audit("factor_enrolled", &u.id, serde_json::json!({"kind": "totp", "id": id, "by": "cli"})).await?;
            eprintln!("Shown only now: add it to the user's authenticator app (the URI as a QR code, or the secret).");
            print_json(serde_json::json!({"id": id, "secret": secret, "otpauth_uri": uri}));
        }
        FactorCommand::RecoveryCodes { user } => {
            let u = find_user(db, tenant, &user).await?;
            let codes = recovery::regenerate(db, u.tenant, &u.id).await?;
            audit("recovery_codes_created", &u.id, serde_json::json!({"by": "cli"})).await?;
            eprintln!("Shown only now: each code signs in once in place of the authenticator app.");
            print_json(serde_json::json!({"codes": codes}));
        }
        FactorCommand::Remove { user, factor_id } => {
            let u = find_user(db, tenant, &user).await?;
            if !factors::remove(db, u.tenant, &u.id, &factor_id).await? {
                anyhow::bail!("{} has no factor {factor_id}", u.username);
            }
            audit("factor_removed", &u.id, serde_json::json!({"id": factor_id, "by": "cli"})).await?;
            eprintln!("removed factor {factor_id} of {}", u.username);
        }
        FactorCommand::Reset { user } => {
            let u = find_user(db, tenant, &user).await?;
            let n = factors::reset(db, u.tenant, &u.id).await?;
            audit("factors_reset", &u.id, serde_json::json!({"factors": n, "by": "cli"})).await?;
            eprintln!("removed {n} factor(s) and the recovery codes of {}", u.username);
        }
    }
    Ok(())
}

/// One call to the running server's admin API: for what lives in the server's memory
/// (sessions on the embedded store) or must happen where tokens are checked.
async fn admin_api(config: &Config, issuer: &str, method: reqwest::Method, path: &str) -> anyhow::Result<Option<serde_json::Value>> {
    let token = config
        .admin_token
        .as_deref()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| anyhow::anyhow!("this command talks to the running server's admin API: set AUTHRIM_ADMIN_TOKEN"))?;
    let url = format!("{issuer}{path}");
    let res = reqwest::Client::new()
        .request(method, &url)
        .bearer_auth(token)
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("cannot reach the server at {issuer} (AUTHRIM_ISSUER): {e}"))?;
    let status = res.status();
    let body: Option<serde_json::Value> = res.json().await.ok();
    if !status.is_success() {
        let why = body.as_ref().and_then(|b| b["error_description"].as_str()).unwrap_or("").to_string();
        anyhow::bail!("the server answered {status}: {why}");
    }
    Ok(body)
}

/// The vault of the data directory (or `AUTHRIM_KEY_ENCRYPTION_KEY`): it seals signing keys and
/// `client_secret_jwt` secrets.
fn open_vault(config: &Config) -> anyhow::Result<crate::keys::Vault> {
    crate::keys::Vault::open(config.key_encryption_key.as_deref(), &config.data_dir)
}

async fn save_client(db: &crate::db::Database, client: &clients::Client) -> anyhow::Result<()> {
    let c = client.clone();
    Ok(db.write(move |sql| clients::save(sql, &c)).await?)
}

async fn find_client(db: &crate::db::Database, tenant: TenantId, id: &str) -> anyhow::Result<clients::Client> {
    let owned = id.to_string();
    db.read(move |sql| clients::load_one(sql, tenant, &owned)).await?.ok_or_else(|| anyhow::anyhow!("no client {id:?}"))
}

async fn find_user(db: &crate::db::Database, tenant: TenantId, key: &str) -> anyhow::Result<users::User> {
    let owned = key.to_string();
    db.read(move |sql| users::find(sql, tenant, &owned)).await?.ok_or_else(|| anyhow::anyhow!("no user {key:?}"))
}

#[cfg(test)]
mod tests {
    /// clap checks a command line's definition only when it is built, and in debug builds
    /// panics on a bad one (two args with one id, say): check every subcommand here.
    #[test]
    fn the_command_line_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
