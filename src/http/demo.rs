//! Demo mode (`authrim serve --demo`): a demo client and user, printed instructions, and a
//! callback page that shows the code with the command that redeems it.

use crate::app::App;
use crate::registry::{clients, users, ClientInput, UserInput};
use crate::http::params::Params;
use crate::ui::{Msg, Page};
use axum::response::IntoResponse;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

pub const DEMO_CLIENT: &str = "demo-client";
pub const DEMO_USER: &str = "demo";
pub const DEMO_PASSWORD: &str = "demo-password";

/// Create (or refresh) the demo client and user; print how to log in. The demo client's
/// secret is replaced on every start, since a stored secret cannot be shown again. Returns
/// the secret (it is printed, and nowhere else).
pub async fn prepare(app: &App) -> anyhow::Result<String> {
    let callback = app.endpoint("/demo/callback");
    let input = ClientInput {
        client_id: Some(DEMO_CLIENT.into()),
        client_name: Some("Authrim demo client".into()),
        redirect_uris: Some(vec![callback.clone()]),
        ..Default::default()
    };
    let (client, secret) = match app.registry.client(DEMO_CLIENT) {
        Some(existing) => {
            let (c, _) = clients::update_client(&existing, input, app.keys.vault()).map_err(anyhow::Error::msg)?;
            let (c, s) = clients::rotate_secret(&c, app.keys.vault()).map_err(anyhow::Error::msg)?;
            (c, s)
        }
        None => {
            let (c, s) = clients::new_client(input, app.keys.vault()).map_err(anyhow::Error::msg)?;
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
            roles: None,
        })
        .map_err(anyhow::Error::msg)?;
        app.registry.save_user(user).await?;
    }
    let authorize = format!(
        "{}/authorize?response_type=code&client_id={DEMO_CLIENT}&redirect_uri={}&scope=openid%20profile%20email&state=demo&nonce=demo",
        app.issuer(),
        url::form_urlencoded::byte_serialize(callback.as_bytes()).collect::<String>()
    );
    eprintln!(
        "\n  Authrim demo mode\n  ─────────────────\n  client_id:     {DEMO_CLIENT}\n  client_secret: {secret}\n  user:          {DEMO_USER} / {DEMO_PASSWORD}\n\n  Open this in a browser and sign in:\n  {authorize}\n"
    );
    Ok(secret)
}

/// The callback page: the code and the `curl` command that redeems it. Anyone who can reach
/// the server can open this page, so it never shows the client secret (printed in the
/// terminal at start; the command says `CLIENT_SECRET`). The code goes into a shell command
/// someone will paste, so only a value shaped like the codes we mint is put there, and quoted.
pub async fn callback(State(app): State<crate::app::AppState>, RawQuery(query): RawQuery) -> Response {
    let bad = |msg: Msg| super::pages::error_page(StatusCode::BAD_REQUEST, msg);
    let Ok(q) = Params::parse(query.unwrap_or_default().as_bytes()) else {
        return bad(Msg::new("err-demo-query"));
    };
    if let Some(err) = q.get("error") {
        return bad(Msg::new("err-demo-failed").detail(err.to_string()));
    }
    // Only a code this server could have minted is shown as a sign-in (not `code=''`).
    let Some(code) = q.get("code").filter(|c| is_minted_code(c)) else {
        return bad(Msg::new("err-demo-no-code"));
    };
    let curl = format!(
        "curl -s -u {} -d grant_type=authorization_code -d code={} --data-urlencode redirect_uri={} {}",
        sh_quote(&format!("{DEMO_CLIENT}:CLIENT_SECRET")),
        sh_quote(code),
        sh_quote(&app.endpoint("/demo/callback")),
        sh_quote(&app.endpoint("/token")),
    );
    Page::new(StatusCode::OK, "demo_callback.html", "demo-title").with("seconds", app.config.code_expiry).with("curl", curl).into_response()
}

/// `{shard}_{base64url}`, the shape of every code `stores::shard::mint_prefixed` makes.
fn is_minted_code(code: &str) -> bool {
    let Some((shard, random)) = code.split_once('_') else { return false };
    (1..=10).contains(&shard.len())
        && shard.bytes().all(|b| b.is_ascii_digit())
        && (1..=128).contains(&random.len())
        && random.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// One POSIX shell word: single quotes keep everything literal except a single quote, which
/// is closed, escaped and reopened (`'\''`).
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_codes_shaped_like_ours_are_accepted() {
        assert!(is_minted_code("12_dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
        for bad in ["", "_abc", "12_", "x_abc", "12abc", "12_a b", "12_a'b", "12_a;b", "12_$(id)", "1_a%27", "12_<b>"] {
            assert!(!is_minted_code(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn shell_quoting_keeps_every_character_literal() {
        assert_eq!(sh_quote("12_abc"), "'12_abc'");
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
        // The quoted word, run through a real shell, is the original string.
        for s in ["plain", "it's", "''", "$(id) `id` $HOME \\ \" ; & | > *", "new\nline"] {
            let out = std::process::Command::new("sh").arg("-c").arg(format!("printf %s {}", sh_quote(s))).output().unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s);
        }
    }
}
