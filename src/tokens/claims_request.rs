//! The `claims` request parameter (OpenID Connect Core §5.5): which individual claims the
//! client wants in the ID token and from userinfo, beyond what its scopes imply.

use crate::error::OAuthError;
use serde_json::Value;

/// Parse and check the shape of a `claims` parameter: a JSON object whose optional `userinfo`
/// and `id_token` members are objects mapping claim names to `null` or a request object.
pub fn parse(raw: &str) -> Result<Value, OAuthError> {
    let value: Value = serde_json::from_str(raw)
        .map_err(|_| OAuthError::invalid_request("the claims parameter is not valid JSON"))?;
    let obj = value.as_object().ok_or_else(|| OAuthError::invalid_request("the claims parameter must be a JSON object"))?;
    for member in ["userinfo", "id_token"] {
        if let Some(m) = obj.get(member) {
            let m = m.as_object().ok_or_else(|| OAuthError::invalid_request(format!("claims.{member} must be an object")))?;
            for (name, req) in m {
                if !(req.is_null() || req.is_object()) {
                    return Err(OAuthError::invalid_request(format!("claims.{member}.{name} must be null or an object")));
                }
            }
        }
    }
    Ok(value)
}

/// Claim names requested for `member` ("userinfo" or "id_token").
pub fn requested(claims: Option<&Value>, member: &str) -> Vec<String> {
    claims
        .and_then(|c| c.get(member))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The `acr` values the `claims` request asks of the ID token, and whether it says they are
/// essential (OpenID Connect Core §5.5.1.1).
pub fn requested_acr(claims: Option<&Value>) -> (Vec<String>, bool) {
    let Some(acr) = claims.and_then(|c| c.get("id_token")).and_then(|t| t.get("acr")).filter(|a| a.is_object()) else {
        return (Vec::new(), false);
    };
    let mut values: Vec<String> = acr.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect();
    if let Some(v) = acr.get("value").and_then(Value::as_str) {
        values.push(v.to_string());
    }
    (values, acr.get("essential").and_then(Value::as_bool) == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_requests_parse() {
        let v = parse(r#"{"userinfo":{"email":{"essential":true},"name":null},"id_token":{"auth_time":{"essential":true}}}"#).unwrap();
        let mut u = requested(Some(&v), "userinfo");
        u.sort();
        assert_eq!(u, vec!["email", "name"]);
        assert_eq!(requested(Some(&v), "id_token"), vec!["auth_time"]);
    }

    #[test]
    fn malformed_requests_are_invalid_request() {
        for bad in ["not json", "[]", r#"{"userinfo":[]}"#, r#"{"id_token":{"email":true}}"#] {
            assert_eq!(parse(bad).unwrap_err().code, "invalid_request", "{bad}");
        }
    }
}
