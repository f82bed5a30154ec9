//! A write that cannot become durable changes nothing: with the data directory on a real,
//! full file system (a small tmpfs this test mounts), a refresh and a code redemption answer
//! 503, and once space is freed the same token and the same code work; so do a TOTP code,
//! a passkey registration and a passkey sign-in (second factors are written to the database).

use crate::harness::*;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Result<Self, String> {
        std::fs::create_dir_all(at).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Self(at.to_path_buf()))
    }

    /// Fill the file system with one file until the kernel says no more; returns that file.
    fn fill(&self) -> PathBuf {
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_changes_nothing_and_the_retry_succeeds() {
    let outer = tempfile::tempdir().unwrap();
    let fs = match Tmpfs::mount(&outer.path().join("data"), "8m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIPPED a_refused_write_changes_nothing_and_the_retry_succeeds: cannot mount a tmpfs here ({why}); it needs root");
            return;
        }
    };
    let mut config = test_config(&fs.0);
    config.sqlite_synchronous = "FULL".into();
    let s = TestServer::start_in(tempfile::tempdir().unwrap(), config).await;
    let (id, secret) = s.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"], "scope": "openid offline_access"})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    let scope = [("scope", "openid offline_access")];
    let first = s.code_for(&b, &id, "alice", &scope).await["code"].clone();
    let (st, tokens, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &first), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let code = s.code_for(&b, &id, "alice", &scope).await["code"].clone();

    let filler = fs.fill();
    let (st, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]).await;
    assert_eq!((st, body["error"].as_str()), (503, Some("temporarily_unavailable")), "refresh on a full disk: {body}");
    let (st, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!((st, body["error"].as_str()), (503, Some("temporarily_unavailable")), "redemption on a full disk: {body}");

    std::fs::remove_file(filler).unwrap();
    let (st, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]).await;
    assert_eq!(st, 200, "the same refresh token works once the disk has room: {body}");
    let (st, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "the same code redeems once the disk has room: {body}");
    s.server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_factor_write_changes_nothing_and_the_retry_succeeds() {
    use crate::passkeys::*;
    let outer = tempfile::tempdir().unwrap();
    let fs = match Tmpfs::mount(&outer.path().join("data"), "8m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIPPED a_refused_factor_write_changes_nothing_and_the_retry_succeeds: cannot mount a tmpfs here ({why}); it needs root");
            return;
        }
    };
    let mut config = test_config(&fs.0);
    config.sqlite_synchronous = "FULL".into();
    passkey_config(&mut config);
    let s = TestServer::start_in(tempfile::tempdir().unwrap(), config).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let alice = s.user("alice", json!({})).await;
    let browser = s.browser();
    let acct = account(&browser).await;

    // A passkey registration on a full disk: 503, nothing stored; the same answer then works.
    let mut auth = Authenticator::new(false);
    let setup = post(&browser, "/account/passkeys/new", &[("csrf", &field(&acct, "csrf"))]).await;
    let answer = auth.create(&options(&setup), ORIGIN, RP_ID);
    let form = [("csrf", field(&setup, "csrf")), ("passkey_state", field(&setup, "passkey_state")), ("credential", answer), ("name", "Key".into())];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let filler = fs.fill();
    let refused = browser.post_no_follow("/account/passkeys", &form).await;
    assert_eq!(refused.status, 503, "{}", refused.html);
    std::fs::remove_file(&filler).unwrap();
    let (_, listed) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/factors"), None).await;
    assert_eq!(listed["factors"], json!([]), "{listed}");
    let added = browser.post_no_follow("/account/passkeys", &form).await;
    assert_eq!((added.status, added.location.as_deref()), (303, Some("/account?done=passkey")), "{}", added.html);

    // A passkey sign-in on a full disk: 503; the same answer with the same state then signs in.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    let answer = auth.get(&options(&login), ORIGIN, RP_ID, true);
    let form = [("challenge", login.challenge()), ("passkey_state", field(&login, "passkey_state")), ("credential", answer)];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let filler = fs.fill();
    let refused = b.post_no_follow("/login/passkey", &form).await;
    assert_eq!(refused.status, 503, "{}", refused.html);
    std::fs::remove_file(&filler).unwrap();
    let page = b.post("/login/passkey", &form).await;
    let claims = id_token(&s, &secret, &finish(&b, page).await).await;
    assert_eq!(claims["acr"], authrim::factors::ACR_PASSKEY);

    // A TOTP code at the second step on a full disk: 503, and the same code then works once.
    let (st, v) = s.admin(reqwest::Method::POST, &format!("/admin/users/{alice}/factors/totp"), Some(json!({}))).await;
    assert_eq!(st, 201, "{v}");
    let code = authrim::factors::totp::code_at(v["secret"].as_str().unwrap(), authrim::util::now()).unwrap();
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[("prompt", "login")])).await).await;
    let step = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let filler = fs.fill();
    let refused = b.post_no_follow("/login/second-factor", &[("challenge", &step.challenge()), ("code", &code)]).await;
    assert_eq!(refused.status, 503, "{}", refused.html);
    std::fs::remove_file(&filler).unwrap();
    let done = b.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &code)]).await;
    let claims = id_token(&s, &secret, &finish(&b, done).await).await;
    assert_eq!(claims["acr"], authrim::factors::ACR_MFA);
    s.server.stop().await.unwrap();
}
