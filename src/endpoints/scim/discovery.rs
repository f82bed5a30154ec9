//! RFC 7644 §4: what the service offers, for a client to read before it provisions. Each
//! answer says only what is built (`scim::mod`): `bulk` is not supported; the resource types
//! are `User` (with the enterprise extension) and `Group`.

use super::user_schema::{self, ENTERPRISE, USER};
use super::{scim_json, ScimError, BASE, LIST_SCHEMA};
use crate::tenant::Issuer;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Value};

/// The most resources one list answer holds (`filter.maxResults`); a larger `count` is cut.
pub const MAX_RESULTS: usize = 200;

const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

pub async fn service_provider_config(app: Issuer) -> Response {
    scim_json(&json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
        "patch": {"supported": true},
        "bulk": {"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": true, "maxResults": MAX_RESULTS},
        // A password can be set by PUT or PATCH (`password`, write-only).
        "changePassword": {"supported": true},
        "sort": {"supported": true},
        "etag": {"supported": true},
        "authenticationSchemes": [{
            "type": "oauthbearertoken", "name": "Bearer credential",
            "description": "One of the tenant's admin credentials with the scope scim (atk_…)", "primary": true,
        }],
        "meta": {"resourceType": "ServiceProviderConfig", "location": app.endpoint(&format!("{BASE}/ServiceProviderConfig"))},
    }))
}

fn group_type(app: &Issuer) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
        "id": "Group", "name": "Group", "endpoint": "/Groups", "description": "Group", "schema": GROUP_SCHEMA,
        "meta": {"resourceType": "ResourceType", "location": app.endpoint(&format!("{BASE}/ResourceTypes/Group"))},
    })
}

fn user_type(app: &Issuer) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
        "id": "User", "name": "User", "endpoint": "/Users", "description": "User", "schema": USER,
        "schemaExtensions": [{"schema": ENTERPRISE, "required": false}],
        "meta": {"resourceType": "ResourceType", "location": app.endpoint(&format!("{BASE}/ResourceTypes/User"))},
    })
}

fn user_schema(app: &Issuer) -> Value {
    user_schema::representation(USER, "User", "User Account", user_schema::USER_ATTRS, app.endpoint(&format!("{BASE}/Schemas/{USER}")))
}

fn enterprise_schema(app: &Issuer) -> Value {
    user_schema::representation(ENTERPRISE, "EnterpriseUser", "Enterprise User", user_schema::ENTERPRISE_ATTRS, app.endpoint(&format!("{BASE}/Schemas/{ENTERPRISE}")))
}

fn list(resources: Vec<Value>) -> Response {
    scim_json(&json!({"schemas": [LIST_SCHEMA], "totalResults": resources.len(), "itemsPerPage": resources.len(), "startIndex": 1, "Resources": resources}))
}

pub async fn resource_types(app: Issuer) -> Response {
    list(vec![user_type(&app), group_type(&app)])
}

pub async fn resource_type(app: Issuer, Path(id): Path<String>) -> Result<Response, ScimError> {
    match id.as_str() {
        "User" => Ok(scim_json(&user_type(&app))),
        "Group" => Ok(scim_json(&group_type(&app))),
        _ => Err(ScimError::not_found("no such resource type")),
    }
}

/// RFC 7643 §8.7.1's Group schema.
fn group_schema(app: &Issuer) -> Value {
    let sub = |name: &str, kind: &str, mutability: &str, description: &str| {
        json!({"name": name, "type": kind, "multiValued": false, "description": description, "required": false,
               "caseExact": false, "mutability": mutability, "returned": "default", "uniqueness": "none"})
    };
    let mut reference = sub("$ref", "reference", "immutable", "The URI of the member");
    reference["referenceTypes"] = json!(["User", "Group"]);
    reference["caseExact"] = true.into();
    // RFC 7643 §8.7.1's, and the only ones taken (§7 lets a service restrict them).
    let mut kind = sub("type", "string", "immutable", "User or Group");
    kind["canonicalValues"] = json!(["User", "Group"]);
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
        "id": GROUP_SCHEMA, "name": "Group", "description": "Group",
        "attributes": [
            {"name": "displayName", "type": "string", "multiValued": false, "description": "A name for the group, unique in the tenant without case",
             "required": true, "caseExact": false, "mutability": "readWrite", "returned": "default", "uniqueness": "server"},
            {"name": "members", "type": "complex", "multiValued": true, "description": "The group's direct members: users and groups",
             "required": false, "mutability": "readWrite", "returned": "default", "uniqueness": "none",
             "subAttributes": [sub("value", "string", "immutable", "The member's id"), reference, kind]},
        ],
        "meta": {"resourceType": "Schema", "location": app.endpoint(&format!("{BASE}/Schemas/{GROUP_SCHEMA}"))},
    })
}

pub async fn schemas(app: Issuer) -> Response {
    list(vec![user_schema(&app), enterprise_schema(&app), group_schema(&app)])
}

pub async fn schema(app: Issuer, Path(id): Path<String>) -> Result<Response, ScimError> {
    match id.as_str() {
        USER => Ok(scim_json(&user_schema(&app))),
        ENTERPRISE => Ok(scim_json(&enterprise_schema(&app))),
        GROUP_SCHEMA => Ok(scim_json(&group_schema(&app))),
        _ => Err(ScimError::not_found("no such schema")),
    }
}
