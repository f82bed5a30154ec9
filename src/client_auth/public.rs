//! `none`: a public client (RFC 6749 §2.1) names itself and proves nothing; PKCE and exact
//! redirect URIs are what protect its codes.

use super::{AuthMethod, Context, Presented, Refusal};
use crate::registry::clients::AUTH_NONE;
use crate::registry::Client;
use async_trait::async_trait;

pub struct None;

#[async_trait]
impl AuthMethod for None {
    fn name(&self) -> &'static str {
        AUTH_NONE
    }

    async fn verify(&self, _: &Context<'_>, _: &Client, presented: &Presented) -> Result<(), Refusal> {
        match presented {
            Presented::Nothing { .. } => Ok(()),
            // A public client that sends a secret or an assertion has been misconfigured or
            // is not who it says: either way, not accepted.
            _ => Err(Refusal::WrongMethod),
        }
    }
}
