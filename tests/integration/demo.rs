//! Demo mode's callback page: shows the code and a command that redeems it, never the client
//! secret, and never puts anything but one of our codes into that command.

use crate::harness::*;
use reqwest::redirect::Policy;

async fn demo_server() -> (TestServer, String) {
    let s = TestServer::start_with(|c| c.demo = true).await;
    let secret = authrim::http::demo::prepare(&s.server.app).await.unwrap();
    (s, secret)
}

/// The demo user signs in to the demo client; returns the callback URL the browser is sent to.
async fn sign_in(s: &TestServer) -> String {
    let browser = reqwest::Client::builder().redirect(Policy::none()).cookie_store(true).build().unwrap();
    let callback = s.server.app.endpoint("/demo/callback");
    let q = [("response_type", "code"), ("client_id", "demo-client"), ("redirect_uri", &callback), ("scope", "openid profile")];
    let mut page = Page::from(browser.get(s.url("/authorize")).query(&q).send().await.unwrap()).await;
    if page.is_login() {
        let form = [("challenge", page.challenge()), ("username", "demo".into()), ("password", "demo-password".into())];
        page = Page::from(browser.post(s.url("/login")).form(&form).send().await.unwrap()).await;
        if let Some(consent) = page.location.clone().filter(|l| l.starts_with("/consent")) {
            page = Page::from(browser.get(s.url(&consent)).send().await.unwrap()).await;
        }
    }
    if page.is_consent() {
        let form = [("challenge", page.challenge()), ("decision", "allow".into())];
        page = Page::from(browser.post(s.url("/consent")).form(&form).send().await.unwrap()).await;
    }
    let location = page.location.unwrap_or_else(|| panic!("no redirect: {}", page.html));
    assert!(location.starts_with(&callback), "{location}");
    location
}

fn unescape(html: &str) -> String {
    html.replace("&#39;", "'").replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

#[tokio::test]
async fn the_callback_page_shows_a_working_command_without_the_secret() {
    let (s, secret) = demo_server().await;
    let callback = sign_in(&s).await;
    let code = url::Url::parse(&callback).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let res = s.http.get(&callback).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(!html.contains(&secret), "the page shows the client secret");
    let pre = html.split("<pre").nth(1).and_then(|p| p.split_once('>')).map(|(_, p)| p.split("</pre>").next().unwrap()).unwrap();
    let command = unescape(pre);
    assert!(command.contains("-u 'demo-client:CLIENT_SECRET'"), "{command}");
    assert!(command.contains(&format!("-d code='{code}'")), "{command}");

    // Pasted into a shell with the secret from the terminal, the command redeems the code.
    let command = command.replace("CLIENT_SECRET", &secret);
    // (tokio's Command: the server runs on this test's runtime and must keep answering.)
    let out = tokio::process::Command::new("sh").arg("-c").arg(&command).output().await.expect("run sh");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{command}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    assert!(answer["access_token"].is_string(), "{answer}");
}

#[tokio::test]
async fn anything_but_one_of_our_codes_stays_out_of_the_command() {
    let (s, secret) = demo_server().await;
    let attacks = [
        "1_x';touch /tmp/authrim-pwned;'",
        "1_x$(touch /tmp/authrim-pwned)",
        "<script>alert(1)</script>",
        "1_abc\" onmouseover=\"alert(1)",
    ];
    for code in attacks {
        let res = s.http.get(s.url("/demo/callback")).query(&[("code", code)]).send().await.unwrap();
        assert_eq!(res.status(), 400, "{code}");
        assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        let html = res.text().await.unwrap();
        assert!(!html.contains("curl"), "{code}: a command was built");
        assert!(!html.contains("<script>alert") && !html.contains("\" onmouseover"), "{code}: not escaped");
        assert!(!html.contains(&secret));
    }
    for query in ["", "?code=", "?code=1_a&code=1_b", "?error=%3Cscript%3Ealert(1)%3C/script%3E"] {
        let res = s.http.get(s.url(&format!("/demo/callback{query}"))).send().await.unwrap();
        assert_eq!(res.status(), 400, "{query}");
        let html = res.text().await.unwrap();
        assert!(!html.contains("curl") && !html.contains("<script>"), "{query}: {html}");
    }
}
