//! Outgoing GETs of documents a client names (its `jwks_uri`; later request objects and
//! client metadata documents): bounded in time and size, no redirects, JSON only. The URL's
//! scheme was checked when it was registered (https, or http on a loopback host).

use bytes::BytesMut;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("fetch failed: {0}")]
    Transport(String),
    #[error("the server answered {0}")]
    Status(u16),
    #[error("the document is larger than {0} bytes")]
    TooLarge(usize),
    #[error("the document is not JSON: {0}")]
    NotJson(String),
}

pub struct Fetcher {
    http: reqwest::Client,
    max_bytes: usize,
}

impl Fetcher {
    pub fn new(timeout: Duration, max_bytes: usize) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // A redirect could lead anywhere, a private address included; the registered URL
            // is the document's address.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("authrim/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { http, max_bytes })
    }

    /// GET `url` and parse the body as JSON, reading at most `max_bytes` of it.
    pub async fn get_json(&self, url: &str) -> Result<serde_json::Value, FetchError> {
        let mut res = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| FetchError::Transport(e.without_url().to_string()))?;
        if !res.status().is_success() {
            return Err(FetchError::Status(res.status().as_u16()));
        }
        if res.content_length().is_some_and(|n| n > self.max_bytes as u64) {
            return Err(FetchError::TooLarge(self.max_bytes));
        }
        // The declared length may be absent or false: count what arrives.
        let mut body = BytesMut::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| FetchError::Transport(e.without_url().to_string()))? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(FetchError::TooLarge(self.max_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| FetchError::NotJson(e.to_string()))
    }
}
