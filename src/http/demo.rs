//! Demo mode (`authrim serve --demo`): a demo client and user, printed instructions, and a
//! callback page that shows the code with the command that redeems it.

use crate::app::App;
use crate::registry::{clients, users, ClientInput, UserInput};
use crate::util::html_escape as e;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use std::collections::HashMap;

pub const DEMO_CLIENT: &str = "demo-client";
pub const DEMO_USER: &str = "demo";
pub const DEMO_PASSWORD: &str = "demo-password";

/// Create (or refresh) the demo client and user; print how to log in. The demo client's
/// secret is replaced on every start, since a stored secret cannot be shown again.
pub async fn prepare(app: &App) -> anyhow::Result<()> {
    let callback = app.endpoint("/demo/callback");
    let input = ClientInput {
        client_id: Some(DEMO_CLIENT.into()),
        client_name: Some("Authrim demo client".into()),
        redirect_uris: Some(vec![callback.clone()]),
        ..Default::default()
    };
    let (client, secret) = match app.registry.client(DEMO_CLIENT) {
        Some(existing) => {
            let (c, _) = clients::update_client(&existing, input).map_err(anyhow::Error::msg)?;
            let (c, s) = clients::rotate_secret(&c).map_err(anyhow::Error::msg)?;
            (c, s)
        }
        None => {
            let (c, s) = clients::new_client(input).map_err(anyhow::Error::msg)?;
            (c, s.expect("confidential client has a secret"))
        }
    };
    app.registry.save_client(client).await?;
    if app.registry.user_by_login(DEMO_USER).is_none() {
        let mut claims = serde_json::Map::new();
        claims.insert("name".into(), "Demo User".into());
        claims.insert("email".into(), "demo@example.com".into());
        claims.insert("email_verified".into(), true.into());
        let user = users::new_user(UserInput {
            username: Some(DEMO_USER.into()),
            password: Some(DEMO_PASSWORD.into()),
            claims,
            disabled: None,
        })
        .map_err(anyhow::Error::msg)?;
        app.registry.save_user(user).await?;
    }
    DEMO_SECRET.set(secret.clone()).ok();
    let authorize = format!(
        "{}/authorize?response_type=code&client_id={DEMO_CLIENT}&redirect_uri={}&scope=openid%20profile%20email&state=demo&nonce=demo",
        app.issuer(),
        url::form_urlencoded::byte_serialize(callback.as_bytes()).collect::<String>()
    );
    eprintln!(
        "\n  Authrim demo mode\n  ─────────────────\n  client_id:     {DEMO_CLIENT}\n  client_secret: {secret}\n  user:          {DEMO_USER} / {DEMO_PASSWORD}\n\n  Open this in a browser and sign in:\n  {authorize}\n"
    );
    Ok(())
}

static DEMO_SECRET: std::sync::OnceLock<String> = std::sync::OnceLock::new();

pub async fn callback(State(app): State<crate::app::AppState>, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(err) = q.get("error") {
        return super::pages::error_page(StatusCode::BAD_REQUEST, &format!("The authorization failed: {err}"));
    }
    let code = q.get("code").map(String::as_str).unwrap_or("");
    let curl = format!(
        "curl -s -u '{DEMO_CLIENT}:{}' -d grant_type=authorization_code -d code='{code}' --data-urlencode redirect_uri='{}' {}",
        DEMO_SECRET.get().map(String::as_str).unwrap_or("CLIENT_SECRET"),
        app.endpoint("/demo/callback"),
        app.endpoint("/token"),
    );
    super::pages::html(
        StatusCode::OK,
        "Signed in",
        &format!(
            "<h1>Signed in</h1><p>Authrim sent back an authorization code. Redeem it within {} seconds:</p>\
             <pre style=\"white-space:pre-wrap;word-break:break-all\">{}</pre>",
            app.config.code_expiry,
            e(&curl)
        ),
    )
}
