//! CIBA user codes (CIBA Core §7.1): the user sets one on the account page (CSRF, stored as
//! Argon2id); a client registered for `backchannel_user_code_parameter` must send it
//! (`missing_user_code`), a wrong one is `invalid_user_code`, and wrong ones are throttled in
//! a bucket of their own (the user's password sign-in is not locked by a client's guesses).

use crate::ciba::{account, ask, call_and_users, server, GRANT};
use crate::passkeys::{field, post};
use serde_json::json;

const CODE: &str = "2468 blue";

#[tokio::test]
async fn a_user_code_is_required_checked_stored_hashed_and_throttled() {
    for postgres in [false, true] {
        let s = server(postgres, |c| c.login_max_failures_per_account = 3).await;
        let call = call_and_users(&s).await;
        let meta: serde_json::Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
        assert_eq!(meta["backchannel_user_code_parameter_supported"], true);
        let (_, desk) = s.client("desk", json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll", "backchannel_user_code_parameter": true})).await;
        let desk = desk.unwrap();
        let form = |code: Option<&'static str>| {
            let mut f = vec![("scope", "openid"), ("login_hint", "alice")];
            f.extend(code.map(|c| ("user_code", c)));
            f
        };
        let refused = |code: &'static str| move |(st, body): (u16, serde_json::Value)| assert_eq!((st, body["error"].as_str()), (400, Some(code)), "{body}");

        refused("missing_user_code")(ask(&s, "desk", Some(&desk), &form(None)).await);
        refused("invalid_user_code")(ask(&s, "desk", Some(&desk), &form(Some(CODE))).await); // alice has none yet

        // Alice sets her code: CSRF as every form, a code of 4 to 64 characters.
        let phone = s.browser();
        let page = account(&phone, "alice").await;
        assert!(page.html.contains("action=\"/account/user-code\"") && page.html.contains("You have not set a code."), "{}", page.html);
        let forged = phone.post_no_follow("/account/user-code", &[("csrf", "forged"), ("user_code", CODE)]).await;
        assert_eq!(forged.status, 400);
        let short = post(&phone, "/account/user-code", &[("csrf", &field(&page, "csrf")), ("user_code", "123")]).await;
        assert!(short.html.contains("The code must be 4 to 64 characters"), "{}", short.html);
        let done = post(&phone, "/account/user-code", &[("csrf", &field(&page, "csrf")), ("user_code", CODE)]).await;
        assert!(done.html.contains("Your code for sign-in requests was saved.") && done.html.contains("You have set a code."), "{}", done.html);
        let stored = s.server.app.db.read(|sql| sql.query("SELECT code_hash FROM ciba_user_codes", &[])).await.unwrap();
        assert_eq!(stored.len(), 1);
        let hash = stored[0].text(0).unwrap();
        assert!(hash.starts_with("$argon2id$") && !hash.contains(CODE), "{hash}");

        let (st, r) = ask(&s, "desk", Some(&desk), &form(Some(CODE))).await;
        assert_eq!(st, 200, "{r}");
        refused("invalid_user_code")(ask(&s, "desk", Some(&desk), &form(Some("2468 blu"))).await);
        // A client not registered for user codes need not send one; one it sends is checked.
        let (st, r) = ask(&s, "call", Some(&call), &form(None)).await;
        assert_eq!(st, 200, "{r}");
        refused("invalid_user_code")(ask(&s, "call", Some(&call), &form(Some("0000"))).await);

        // Wrong codes from any client fill Alice's user-code bucket: now even the right one is refused.
        refused("invalid_user_code")(ask(&s, "desk", Some(&desk), &form(Some("1111"))).await);
        let (st, body) = ask(&s, "desk", Some(&desk), &form(Some(CODE))).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_user_code")), "{body}");
        assert!(body["error_description"].as_str().unwrap().contains("too many"), "{body}");
        // Bob's code bucket is his own, and Alice can still sign in with her password.
        refused("invalid_user_code")(ask(&s, "desk", Some(&desk), &[("scope", "openid"), ("login_hint", "bob"), ("user_code", CODE)]).await);
        account(&s.browser(), "alice").await;

        // Removed: the code no longer works.
        let page = account(&phone, "alice").await;
        let gone = post(&phone, "/account/user-code/remove", &[("csrf", &field(&page, "csrf"))]).await;
        assert!(gone.html.contains("Your code for sign-in requests was removed."), "{}", gone.html);
        let left = s.server.app.db.read(|sql| sql.query("SELECT code_hash FROM ciba_user_codes", &[])).await.unwrap();
        assert!(left.is_empty());
    }
}
