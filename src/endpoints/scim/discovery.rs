//! RFC 7644 §4: what the service offers, for a client to read before it provisions. Each
//! answer says only what is built (`scim::mod`): `bulk` is not supported, and `Group` is the
//! one resource type so far.

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
        "changePassword": {"supported": false},
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

fn list(resources: Vec<Value>) -> Response {
    scim_json(&json!({"schemas": [LIST_SCHEMA], "totalResults": resources.len(), "itemsPerPage": resources.len(), "startIndex": 1, "Resources": resources}))
}

pub async fn resource_types(app: Issuer) -> Response {
    list(vec![group_type(&app)])
}

pub async fn resource_type(app: Issuer, Path(id): Path<String>) -> Result<Response, ScimError> {
    match id.as_str() {
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
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
        "id": GROUP_SCHEMA, "name": "Group", "description": "Group",
        "attributes": [
            {"name": "displayName", "type": "string", "multiValued": false, "description": "A name for the group, unique in the tenant without case",
             "required": true, "caseExact": false, "mutability": "readWrite", "returned": "default", "uniqueness": "server"},
            {"name": "members", "type": "complex", "multiValued": true, "description": "The group's direct members: users and groups",
             "required": false, "mutability": "readWrite", "returned": "default", "uniqueness": "none",
             "subAttributes": [sub("value", "string", "immutable", "The member's id"), reference,
                               sub("type", "string", "immutable", "User or Group"), sub("display", "string", "readOnly", "The member's name")]},
        ],
        "meta": {"resourceType": "Schema", "location": app.endpoint(&format!("{BASE}/Schemas/{GROUP_SCHEMA}"))},
    })
}

pub async fn schemas(app: Issuer) -> Response {
    list(vec![group_schema(&app)])
}

pub async fn schema(app: Issuer, Path(id): Path<String>) -> Result<Response, ScimError> {
    match id == GROUP_SCHEMA {
        true => Ok(scim_json(&group_schema(&app))),
        false => Err(ScimError::not_found("no such schema")),
    }
}
