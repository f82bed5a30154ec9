//! Table-driven tests: RFC 7644 §3.4.2.2's example filters and §3.5.2's PATCH paths, the
//! filter and path shapes Entra ID and Okta send, precedence, case, refusals, and a
//! generator of random token strings and random trees (parse never panics; printing a tree
//! parses back to it).

use super::filter::{self, CompareOp, Filter};
use super::{path, AttrPath, CoreSchema, ScimType, MAX_FILTER_DEPTH, MAX_FILTER_LENGTH};
use crate::fuzzing::SplitMix as Rng;
use serde_json::{json, Value};

const ENTERPRISE: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// Two users shaped after RFC 7643 §8.2. O'Malley's lastModified is one second before
/// Jensen's, but written with an offset that sorts it after as text.
fn users() -> [Value; 2] {
    [
        json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", ENTERPRISE],
            "id": "2819c223-7f76-453a-919d-413861904646",
            "externalId": "701984",
            "userName": "bjensen",
            "name": {"familyName": "Jensen", "givenName": "Barbara"},
            "displayName": "Babs Jensen",
            "title": "Tour Guide",
            "userType": "Employee",
            "active": true,
            "loginCount": 5,
            "emails": [
                {"value": "bjensen@example.com", "type": "work", "primary": true},
                {"value": "babs@jensen.org", "type": "home"}
            ],
            "ims": [{"value": "babs@bar.com", "type": "aim"}],
            "meta": {"resourceType": "User", "created": "2010-01-23T04:56:22Z", "lastModified": "2011-05-13T04:42:34Z"},
            ENTERPRISE: {"employeeNumber": "701984", "manager": {"value": "26118915-6090-4610-87e4-49d8ca9f808d"}}
        }),
        json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "id": "c3a26dd3-27a0-4dec-a2ac-ce211e105f97",
            "externalId": "AbC-7",
            "userName": "Jim.OMalley",
            "name": {"familyName": "O'Malley", "givenName": "Jim"},
            "title": null,
            "userType": "Intern",
            "active": false,
            "emails": [{"value": "jim@omalley.net", "type": "work"}],
            "ims": [{"value": "jim@foo.com", "type": "xmpp"}],
            "meta": {"resourceType": "User", "lastModified": "2011-05-13T06:42:33+02:00"}
        }),
    ]
}

fn group() -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "id": "e9e30dba-f08f-4109-8486-d5c6a331660a",
        "displayName": "Tour Guides",
        "members": [{"value": "2819c223-7f76-453a-919d-413861904646", "display": "Babs Jensen"}]
    })
}

fn eval(filter: &str, resource: &Value) -> bool {
    let parsed = filter::parse(filter).unwrap_or_else(|e| panic!("{filter}: {e}"));
    parsed.matches(resource, &CoreSchema).unwrap_or_else(|e| panic!("{filter}: {e}"))
}

/// Each filter with whether it matches [Jensen, O'Malley].
fn check(table: &[(&str, [bool; 2])]) {
    let users = users();
    for (filter, expected) in table {
        let got = [eval(filter, &users[0]), eval(filter, &users[1])];
        assert_eq!(got, *expected, "{filter}");
    }
}

#[test]
fn rfc7644_example_filters() {
    check(&[
        (r#"userName eq "bjensen""#, [true, false]),
        (r#"name.familyName co "O'Malley""#, [false, true]),
        (r#"userName sw "J""#, [false, true]),
        (r#"urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J""#, [false, true]),
        ("title pr", [true, false]),
        // Chronological, not textual: O'Malley's "06:42:33+02:00" is 04:42:33Z.
        (r#"meta.lastModified gt "2011-05-13T04:42:34Z""#, [false, false]),
        (r#"meta.lastModified ge "2011-05-13T04:42:34Z""#, [true, false]),
        (r#"meta.lastModified lt "2011-05-13T04:42:34Z""#, [false, true]),
        (r#"meta.lastModified le "2011-05-13T04:42:34Z""#, [true, true]),
        (r#"title pr and userType eq "Employee""#, [true, false]),
        (r#"title pr or userType eq "Intern""#, [true, true]),
        (&format!(r#"schemas eq "{ENTERPRISE}""#), [true, false]),
        (r#"userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")"#, [true, false]),
        (r#"userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")"#, [false, true]),
        (r#"userType eq "Employee" and (emails.type eq "work")"#, [true, false]),
        (r#"userType eq "Employee" and emails[type eq "work" and value co "@example.com"]"#, [true, false]),
        (r#"emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]"#, [true, true]),
    ]);
}

#[test]
fn provisioning_clients_filters() {
    // Entra ID and Okta look users up by one attribute, and groups by member.
    check(&[
        (r#"userName eq "bjensen""#, [true, false]),
        (r#"userName eq "jim.omalley""#, [false, true]),
        (r#"externalId eq "701984""#, [true, false]),
        (r#"displayName eq "Babs Jensen""#, [true, false]),
        (r#"emails[type eq "work"]"#, [true, true]),
        (r#"emails[type eq "work" and primary eq true]"#, [true, false]),
        (&format!(r#"{ENTERPRISE}:employeeNumber eq "701984""#), [true, false]),
        (&format!(r#"{ENTERPRISE}:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d""#), [true, false]),
    ]);
    let group = group();
    assert!(eval(r#"members[value eq "2819c223-7f76-453a-919d-413861904646"]"#, &group));
    assert!(!eval(r#"members[value eq "c3a26dd3-27a0-4dec-a2ac-ce211e105f97"]"#, &group));
    assert!(eval(r#"displayName eq "tour guides""#, &group));
    assert!(eval(r#"urn:ietf:params:scim:schemas:core:2.0:Group:displayName sw "Tour""#, &group));
}

#[test]
fn case_insensitive_names_operators_and_strings() {
    check(&[
        (r#"USERNAME EQ "BJensen""#, [true, false]),
        (r#"Name.FamilyName Co "JEN""#, [true, false]),
        (r#"EMAILS[TYPE eq "WORK" AND Value EW ".COM"]"#, [true, false]),
        ("TITLE PR", [true, false]),
        ("NOT (title pr)", [false, true]),
        (r#"title pr OR userType EQ "intern""#, [true, true]),
        (r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:user:EMPLOYEENUMBER eq "701984""#, [true, false]),
        (r#"urn:IETF:params:scim:schemas:core:2.0:user:username eq "bjensen""#, [true, false]),
        // caseExact attributes (RFC 7643 §3.1): externalId and id respect case.
        (r#"externalId eq "AbC-7""#, [false, true]),
        (r#"externalId eq "abc-7""#, [false, false]),
        (r#"id eq "2819C223-7F76-453A-919D-413861904646""#, [false, false]),
        (r#"userName gt "BJENSEN""#, [false, true]),
    ]);
}

#[test]
fn types_absence_and_null() {
    check(&[
        ("active eq true", [true, false]),
        ("active ne true", [false, true]),
        ("loginCount gt 4", [true, false]),
        ("loginCount ge 5.0", [true, false]),
        ("loginCount lt 1e1", [true, false]),
        ("loginCount eq 5", [true, false]),
        (r#"loginCount eq "5""#, [false, false]),
        // Absent attributes match no comparison; `not` is what makes them match.
        (r#"nickName eq "x""#, [false, false]),
        (r#"nickName ne "x""#, [false, false]),
        (r#"not (nickName eq "x")"#, [true, true]),
        // RFC 7643 §2.5: null and unassigned are one state.
        ("title eq null", [false, true]),
        ("title ne null", [true, false]),
        ("nickName eq null", [true, true]),
        ("meta.created pr", [true, false]),
        (r#"meta.created eq "2010-01-23T05:56:22+01:00""#, [true, false]),
        (r#"meta.lastModified gt "2011-05-13T04:42:33.5Z""#, [true, false]),
        (r#"meta.lastModified co "2011""#, [true, true]),
    ]);
    let users = users();
    // RFC 7644 §3.4.2.2: ordering a boolean or a complex attribute is an invalid filter.
    for refused in ["active gt 1", r#"name gt "a""#, "emails.primary ge 0", r#"meta.lastModified gt "yesterday""#] {
        let parsed = filter::parse(refused).unwrap();
        let error = parsed.matches(&users[0], &CoreSchema).unwrap_err();
        assert_eq!(error.scim_type, ScimType::InvalidFilter, "{refused}");
    }
}

fn attr(name: &str) -> AttrPath {
    AttrPath { urn: None, name: name.into(), sub: None }
}

fn present(name: &str) -> Box<Filter> {
    Box::new(Filter::Present(attr(name)))
}

#[test]
fn precedence_and_associativity() {
    use Filter::{And, Not, Or};
    let table = [
        ("a pr or b pr and c pr", Or(present("a"), Box::new(And(present("b"), present("c"))))),
        ("a pr and b pr or c pr", Or(Box::new(And(present("a"), present("b"))), present("c"))),
        ("a pr or b pr or c pr", Or(Box::new(Or(present("a"), present("b"))), present("c"))),
        ("a pr and b pr and c pr", And(Box::new(And(present("a"), present("b"))), present("c"))),
        ("(a pr or b pr) and c pr", And(Box::new(Or(present("a"), present("b"))), present("c"))),
        ("a pr and (b pr and c pr)", And(present("a"), Box::new(And(present("b"), present("c"))))),
        ("not (a pr) and b pr", And(Box::new(Not(present("a"))), present("b"))),
        ("not(a pr or b pr)", Not(Box::new(Or(present("a"), present("b"))))),
        ("((a pr))", Filter::Present(attr("a"))),
    ];
    for (text, tree) in table {
        let parsed = filter::parse(text).unwrap();
        assert_eq!(parsed, tree, "{text}");
        assert_eq!(filter::parse(&parsed.to_string()).unwrap(), tree, "{text} printed as {parsed}");
    }
    // `and` binds tighter than `or`: read left to right this would be false.
    check(&[(r#"title pr or userType eq "Intern" and userName eq "nobody""#, [true, false])]);
}

#[test]
fn parsed_parts() {
    let parsed = filter::parse(&format!(r#"{ENTERPRISE}:manager.value ne "x\"y\u00e9""#)).unwrap();
    let expected_path = AttrPath { urn: Some(ENTERPRISE.into()), name: "manager".into(), sub: Some("value".into()) };
    assert_eq!(parsed, Filter::Compare(expected_path, CompareOp::Ne, json!("x\"yé")));
    assert_eq!(filter::parse("a eq -1.5e2").unwrap(), Filter::Compare(attr("a"), CompareOp::Eq, json!(-150.0)));
    assert_eq!(filter::parse("$ref eq FALSE").unwrap(), Filter::Compare(attr("$ref"), CompareOp::Eq, json!(false)));
}

#[test]
fn malformed_filters_are_refused() {
    let deep = format!("{}a pr{}", "(".repeat(MAX_FILTER_DEPTH + 1), ")".repeat(MAX_FILTER_DEPTH + 1));
    let deep_not = format!("{}a pr{}", "not (".repeat(MAX_FILTER_DEPTH + 1), ")".repeat(MAX_FILTER_DEPTH + 1));
    let long = format!(r#"userName eq "{}""#, "x".repeat(MAX_FILTER_LENGTH));
    let many_parens = "(".repeat(1_000_000);
    let table: Vec<&str> = vec![
        "", "   ", "userName", "userName eq", "userName eq bjensen", r#"userName xx "a""#,
        r#"userName eq "a"#, "(userName pr", "userName pr)", "not userName pr", "not (userName pr",
        "userName pr and", "and userName pr", "userName pr or or title pr", r#"emails[type eq "work""#,
        r#"emails[type eq "work"].value"#, r#"emails[type eq "work"] eq "x""#, "emails[type[value pr]]",
        "emails[]", "a.b.c pr", "urn:x pr", "urn:a:b pr", "a:b pr", r#"userName eq "\x""#, "userName co 5",
        "userName sw true", "userName gt true", "userName lt null", "userName pr pr", "1abc pr", "userName eq 01",
        "userName eq -", r#"userName eq "a" "b""#, "[]", "()", "ü pr", r#"userName == "x""#,
        "emails[urn:a:b:c pr]", "emails[name.sub pr]", "emails[value pr] and", "name.familyName[value pr]",
        "-a pr", "a..b pr", "a. pr", ".a pr", "$ pr", "a pr [", "a pr]", r#"a eq "é"#, "a eq \"\u{1}\"",
        "not", "not ()", "a pr and ()", &deep, &deep_not, &long, &many_parens,
    ];
    for text in table {
        let error = filter::parse(text).expect_err(text);
        assert_eq!(error.scim_type, ScimType::InvalidFilter, "{text}");
        assert!(error.detail.len() < 300, "{text}: {}", error.detail);
    }
    let error = filter::parse(r#"userName eq "x" title pr"#).unwrap_err();
    assert_eq!(error.detail, "at byte 16: expected `and`, `or` or the end, found `title`");
    // The deepest accepted nesting parses.
    let deepest = format!("{}a pr{}", "(".repeat(MAX_FILTER_DEPTH), ")".repeat(MAX_FILTER_DEPTH));
    assert!(filter::parse(&deepest).is_ok());
}

#[test]
fn rfc7644_patch_paths() {
    let member = "2819c223-7f76-453a-919d-413861904646";
    let table = [
        // §3.5.2 and its operations (§3.5.2.1-3), then Entra ID's and Okta's.
        ("members", None, "members", None, false),
        ("name.familyName", None, "name", Some("familyName"), false),
        (r#"addresses[type eq "work"]"#, None, "addresses", None, true),
        (&format!(r#"members[value eq "{member}"]"#) as &str, None, "members", None, true),
        (&format!(r#"members[value eq "{member}"].displayName"#), None, "members", Some("displayName"), true),
        (r#"emails[type eq "work" and value ew "example.com"]"#, None, "emails", None, true),
        (r#"addresses[type eq "work"].streetAddress"#, None, "addresses", Some("streetAddress"), true),
        (r#"emails[type eq "work"].value"#, None, "emails", Some("value"), true),
        (r#"phoneNumbers[type eq "mobile"].value"#, None, "phoneNumbers", Some("value"), true),
        ("active", None, "active", None, false),
        (&format!("{ENTERPRISE}:manager"), Some(ENTERPRISE), "manager", None, false),
        (&format!("{ENTERPRISE}:manager.value"), Some(ENTERPRISE), "manager", Some("value"), false),
        ("urn:ietf:params:scim:schemas:core:2.0:User:name.givenName", Some("urn:ietf:params:scim:schemas:core:2.0:User"), "name", Some("givenName"), false),
    ];
    for (text, urn, name, sub, filtered) in table {
        let parsed = path::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed.attr.urn.as_deref(), urn, "{text}");
        assert_eq!(parsed.attr.name, name, "{text}");
        assert_eq!(parsed.attr.sub.as_deref(), sub, "{text}");
        assert_eq!(parsed.value_filter.is_some(), filtered, "{text}");
        assert_eq!(path::parse(&parsed.to_string()).unwrap(), parsed, "{text}");
    }
    // The value filter selects values, evaluated on each as a sub-resource.
    let parsed = path::parse(r#"emails[type eq "work" and value co "@example.com"].value"#).unwrap();
    let filter = parsed.value_filter.unwrap();
    let users = users();
    assert!(users[0]["emails"].as_array().unwrap().iter().filter(|e| filter.matches(e, &CoreSchema).unwrap()).count() == 1);
}

#[test]
fn malformed_paths_are_refused() {
    for text in [
        "", " ", "emails[", r#"emails[type eq "work"]value"#, r#"emails[type eq "work"]."#,
        r#"emails[type eq "work"].a.b"#, r#"name.familyName[type eq "x"]"#, "emails[]", r#"emails eq "x""#,
        "a b", ".value", r#"emails[type eq "work"][value pr]"#, "emails[type eq]", "a.b.c", "urn:x",
        "(members)", "members)", "not (members)", r#""members""#, "5", r#"emails[type eq "work"].$"#,
    ] {
        let error = path::parse(text).expect_err(text);
        assert_eq!(error.scim_type, ScimType::InvalidPath, "{text}");
    }
}

const TOKENS: [&str; 34] = [
    "userName", "emails", "name.familyName", "type", "value", "eq", "ne", "co", "sw", "gt", "le", "pr",
    "and", "or", "not", "(", ")", "[", "]", r#""x""#, r#""a\"b""#, "5", "-1.5", "true", "false", "null",
    ".value", " ", "\"", "\\", "é", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", ":", "$ref",
];

const CLAUSES: [&str; 10] = [
    r#"userName eq "x""#, "title pr", r#"emails[type eq "work"]"#, "and", "or", "and not (", "(", ")",
    "loginCount gt 4", r#"emails[value co "@" or not (primary eq true)]"#,
];

#[test]
fn random_token_strings_never_panic_and_round_trip() {
    let mut rng = Rng(7);
    let users = users();
    let mut parsed_count = 0;
    for _ in 0..20_000 {
        let len = 1 + rng.below(8);
        let mut text = String::new();
        for _ in 0..len {
            // Whole clauses half the time, so that many strings parse and round-trip.
            text.push_str(if rng.below(2) == 0 { CLAUSES[rng.below(CLAUSES.len())] } else { TOKENS[rng.below(TOKENS.len())] });
            if rng.below(3) > 0 {
                text.push(' ');
            }
        }
        if let Ok(parsed) = filter::parse(&text) {
            parsed_count += 1;
            assert_eq!(filter::parse(&parsed.to_string()).as_ref(), Ok(&parsed), "{text} printed as {parsed}");
            let _ = parsed.matches(&users[0], &CoreSchema);
        }
        if let Ok(parsed) = path::parse(&text) {
            assert_eq!(path::parse(&parsed.to_string()).as_ref(), Ok(&parsed), "{text} printed as {parsed}");
        }
    }
    assert!(parsed_count > 500, "the generator should reach valid filters ({parsed_count})");
}

/// A random tree over the whole grammar, printed and parsed back.
fn random_filter(rng: &mut Rng, depth: usize, in_brackets: bool) -> Filter {
    let names = ["userName", "title", "Type", "value", "$ref"];
    let path = |rng: &mut Rng| {
        let mut path = attr(names[rng.below(names.len())]);
        if !in_brackets {
            match rng.below(4) {
                0 => path.sub = Some(rng.pick(&names).to_string()),
                1 => path.urn = Some(ENTERPRISE.into()),
                _ => {}
            }
        }
        path
    };
    let choice = if depth == 0 { rng.below(2) } else { rng.below(6) };
    match choice {
        0 => Filter::Present(path(rng)),
        1 => {
            let ops = [CompareOp::Eq, CompareOp::Ne, CompareOp::Co, CompareOp::Sw, CompareOp::Ew, CompareOp::Gt, CompareOp::Ge, CompareOp::Lt, CompareOp::Le];
            let op = ops[rng.below(ops.len())];
            let values = [json!("x \"y\" é\n"), json!(""), json!(-3), json!(2.5), json!(true), json!(null)];
            let value = if op.is_substring() { json!("sub") } else if op.is_ordering() { json!(7) } else { values[rng.below(values.len())].clone() };
            Filter::Compare(path(rng), op, value)
        }
        2 => Filter::And(Box::new(random_filter(rng, depth - 1, in_brackets)), Box::new(random_filter(rng, depth - 1, in_brackets))),
        3 => Filter::Or(Box::new(random_filter(rng, depth - 1, in_brackets)), Box::new(random_filter(rng, depth - 1, in_brackets))),
        4 => Filter::Not(Box::new(random_filter(rng, depth - 1, in_brackets))),
        _ if in_brackets => Filter::Present(path(rng)),
        _ => Filter::ValuePath(attr("emails"), Box::new(random_filter(rng, depth - 1, true))),
    }
}

#[test]
fn random_trees_print_and_parse_back() {
    let mut rng = Rng(42);
    for _ in 0..5_000 {
        let tree = random_filter(&mut rng, 4, false);
        let text = tree.to_string();
        assert_eq!(filter::parse(&text).as_ref(), Ok(&tree), "{text}");
    }
}

#[test]
fn the_longest_chains_parse_evaluate_and_print() {
    // The shortest terms make the deepest tree the length bound allows (about 500 levels):
    // evaluated, printed, compared and dropped by recursion, within a test thread's stack.
    for joiner in [" or ", " and "] {
        let mut chain = "a pr".to_string();
        while chain.len() + joiner.len() + 4 <= MAX_FILTER_LENGTH {
            chain.push_str(joiner);
            chain.push_str("a pr");
        }
        let parsed = filter::parse(&chain).unwrap();
        assert!(!parsed.matches(&users()[0], &CoreSchema).unwrap());
        assert_eq!(filter::parse(&parsed.to_string()).unwrap(), parsed);
    }
}
