//! Command line: `serve`, `migrate`, and administration of clients and users without SQL.
//! Admin commands work on the database directly; a running server picks their changes up
//! within a second through the registry change log.

use crate::config::Config;
use crate::registry::{clients, users, ClientInput, UserInput};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "authrim", version, about = "Authrim: a fast, self-hosted OpenID Connect Provider")]
pub struct Cli {
    /// Configuration file (TOML); also AUTHRIM_CONFIG.
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
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
    /// Inspect signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// List security events (newest first).
    Audit {
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only events of this kind (login_failure, refresh_reuse, family_revoked, …).
        #[arg(long)]
        event: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum ClientCommand {
    /// Register a client; prints its metadata and, once, its secret.
    Create(ClientArgs),
    List,
    Show { client_id: String },
    Update { client_id: String, #[command(flatten)] args: ClientArgs },
    Delete { client_id: String },
    /// Issue a new secret (the old one stops working).
    RotateSecret { client_id: String },
}

#[derive(Args, Default)]
pub struct ClientArgs {
    #[arg(long)]
    pub client_id: Option<String>,
    #[arg(long)]
    pub name: Option<String>,
    /// Repeat for several URIs.
    #[arg(long = "redirect-uri")]
    pub redirect_uris: Vec<String>,
    /// Repeat for several grant types.
    #[arg(long = "grant-type")]
    pub grant_types: Vec<String>,
    /// client_secret_basic (default), client_secret_post or none.
    #[arg(long)]
    pub auth_method: Option<String>,
    /// Shorthand for --auth-method none (a public client, which must use PKCE).
    #[arg(long)]
    pub public: bool,
    /// Scopes the client may request, space-separated.
    #[arg(long)]
    pub scope: Option<String>,
    /// An audience the client may request tokens for (repeat for several).
    #[arg(long = "audience")]
    pub audiences: Vec<String>,
    /// A resource URI the client may request tokens for (repeat for several).
    #[arg(long = "resource")]
    pub resources: Vec<String>,
}

impl ClientArgs {
    fn input(self) -> ClientInput {
        ClientInput {
            client_id: self.client_id,
            client_name: self.name,
            redirect_uris: (!self.redirect_uris.is_empty()).then_some(self.redirect_uris),
            grant_types: (!self.grant_types.is_empty()).then_some(self.grant_types),
            response_types: None,
            token_endpoint_auth_method: if self.public { Some("none".into()) } else { self.auth_method },
            scope: self.scope,
            allowed_audiences: (!self.audiences.is_empty()).then_some(self.audiences),
            allowed_resources: (!self.resources.is_empty()).then_some(self.resources),
            token_exchange: None,
        }
    }
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
}

impl UserArgs {
    fn input(self) -> anyhow::Result<UserInput> {
        let password = match (self.password, self.password_stdin) {
            (Some(p), _) => Some(p),
            (None, true) => {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line)?;
                Some(line.trim_end_matches(['\n', '\r']).to_string())
            }
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
        Ok(UserInput { username: self.username, password, disabled: self.disabled, claims })
    }
}

#[derive(Subcommand)]
pub enum KeysCommand {
    List,
    /// Start a key rotation: the new key is published now and signs after the publish delay
    /// (AUTHRIM_KEY_PUBLISH_DELAY); running servers pick it up with their key-cache refresh.
    Rotate,
}

pub fn run_admin(config: &Config, command: Command) -> anyhow::Result<()> {
    let conn = crate::db::open(&config.data_dir, &config.sqlite_synchronous)?;
    let print = |v: serde_json::Value| println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    match command {
        Command::Serve { .. } => unreachable!("serve is not an admin command"),
        Command::Migrate => {
            println!("schema at version {}", crate::db::current_version(&conn)?);
        }
        Command::Client(cmd) => match cmd {
            ClientCommand::Create(args) => {
                let input = args.input();
                if let Some(id) = &input.client_id {
                    if clients::load_one(&conn, id)?.is_some() {
                        anyhow::bail!("a client {id:?} already exists");
                    }
                }
                let (client, secret) = clients::new_client(input).map_err(anyhow::Error::msg)?;
                clients::save(&conn, &client)?;
                let mut v = serde_json::to_value(&client.meta)?;
                if let Some(s) = secret {
                    v["client_secret"] = s.into();
                    eprintln!("The client secret is shown only now: store it safely.");
                }
                print(v);
            }
            ClientCommand::List => {
                print(serde_json::to_value(clients::load_all(&conn)?.iter().map(|c| &c.meta).collect::<Vec<_>>())?)
            }
            ClientCommand::Show { client_id } => print(serde_json::to_value(&find_client(&conn, &client_id)?.meta)?),
            ClientCommand::Update { client_id, args } => {
                let existing = find_client(&conn, &client_id)?;
                let (client, secret) = clients::update_client(&existing, args.input()).map_err(anyhow::Error::msg)?;
                clients::save(&conn, &client)?;
                let mut v = serde_json::to_value(&client.meta)?;
                if let Some(s) = secret {
                    v["client_secret"] = s.into();
                }
                print(v);
            }
            ClientCommand::Delete { client_id } => {
                if !clients::delete(&conn, &client_id)? {
                    anyhow::bail!("no client {client_id:?}");
                }
                eprintln!("deleted client {client_id}");
            }
            ClientCommand::RotateSecret { client_id } => {
                let (client, secret) = clients::rotate_secret(&find_client(&conn, &client_id)?).map_err(anyhow::Error::msg)?;
                clients::save(&conn, &client)?;
                print(serde_json::json!({ "client_id": client_id, "client_secret": secret }));
            }
        },
        Command::User(cmd) => match cmd {
            UserCommand::Create(args) => {
                let mut input = args.input()?;
                if input.password.is_none() {
                    eprint!("password: ");
                    let mut line = String::new();
                    std::io::stdin().read_line(&mut line)?;
                    input.password = Some(line.trim_end_matches(['\n', '\r']).to_string());
                }
                let user = users::new_user(input).map_err(anyhow::Error::msg)?;
                if users::find(&conn, &user.username)?.is_some() {
                    anyhow::bail!("a user {:?} already exists", user.username);
                }
                users::save(&conn, &user)?;
                print(serde_json::to_value(&user)?);
            }
            UserCommand::List => print(serde_json::to_value(users::load_all(&conn)?)?),
            UserCommand::Show { user } => print(serde_json::to_value(find_user(&conn, &user)?)?),
            UserCommand::Update { user, args } => {
                let existing = find_user(&conn, &user)?;
                let updated = users::update_user(&existing, args.input()?).map_err(anyhow::Error::msg)?;
                users::save(&conn, &updated)?;
                print(serde_json::to_value(&updated)?);
            }
            UserCommand::Delete { user } => {
                let existing = find_user(&conn, &user)?;
                users::delete(&conn, &existing.id)?;
                eprintln!("deleted user {}", existing.username);
            }
        },
        Command::Audit { limit, event } => {
            print(serde_json::to_value(crate::audit::list(&conn, limit, event.as_deref())?)?);
        }
        Command::Keys(KeysCommand::Rotate) => {
            let kid = crate::keys::KeyManager::rotate(&conn, &config.data_dir, config.key_encryption_key.as_deref())?;
            print(serde_json::json!({"kid": kid, "state": "next", "signs_after_seconds": config.key_publish_delay}));
        }
        Command::Keys(KeysCommand::List) => {
            let mut stmt = conn.prepare("SELECT kid, alg, state, created_at FROM signing_keys ORDER BY created_at")?;
            let rows = stmt.query_map([], |r| {
                Ok(serde_json::json!({"kid": r.get::<_, String>(0)?, "alg": r.get::<_, String>(1)?,
                    "state": r.get::<_, String>(2)?, "created_at": r.get::<_, i64>(3)?}))
            })?;
            print(serde_json::Value::Array(rows.collect::<Result<_, _>>()?));
        }
    }
    Ok(())
}

fn find_client(conn: &rusqlite::Connection, id: &str) -> anyhow::Result<clients::Client> {
    clients::load_one(conn, id)?.ok_or_else(|| anyhow::anyhow!("no client {id:?}"))
}

fn find_user(conn: &rusqlite::Connection, key: &str) -> anyhow::Result<users::User> {
    users::find(conn, key)?.ok_or_else(|| anyhow::anyhow!("no user {key:?}"))
}
