//! Evaluating a `Filter` against a SCIM resource held as JSON (RFC 7644 §3.4.2.2):
//! - attribute names match without regard to case (RFC 7643 §2.1);
//! - strings compare without regard to case unless the attribute is `caseExact`; ordering on
//!   strings is lexicographic (on the case-folded strings where case is ignored), on
//!   dateTimes chronological, on numbers numeric; ordering a boolean or a complex value is
//!   refused with `invalidFilter`, as the RFC requires;
//! - a multi-valued attribute matches if any of its values does; a complex attribute named
//!   without a sub-attribute is compared by its `value` sub-attribute (as `emails co "x"` in
//!   the RFC's examples);
//! - an absent attribute matches no comparison, so only `not` makes it match; except
//!   `eq null`/`ne null`, which RFC 7643 §2.5 makes "not present"/"present", as null and
//!   unassigned are the same state.

use super::filter::{CompareOp, Filter};
use super::{AttrPath, AttributeTypes, FilterError};
use serde_json::{Map, Value};
use std::cmp::Ordering;

impl Filter {
    /// Whether `resource` matches. Errors only where the RFC makes the filter itself invalid
    /// for the attribute (`gt` on a boolean, a dateTime compared with a non-date).
    pub fn matches(&self, resource: &Value, schema: &dyn AttributeTypes) -> Result<bool, FilterError> {
        eval(self, resource, None, schema)
    }
}

/// `parent`: the multi-valued attribute whose value `node` is, inside a value path.
fn eval(filter: &Filter, node: &Value, parent: Option<&AttrPath>, schema: &dyn AttributeTypes) -> Result<bool, FilterError> {
    match filter {
        Filter::And(left, right) => Ok(eval(left, node, parent, schema)? && eval(right, node, parent, schema)?),
        Filter::Or(left, right) => Ok(eval(left, node, parent, schema)? || eval(right, node, parent, schema)?),
        Filter::Not(inner) => Ok(!eval(inner, node, parent, schema)?),
        Filter::Present(path) => Ok(values(node, path, parent, false).into_iter().any(present)),
        Filter::Compare(path, op, Value::Null) => {
            let present = values(node, path, parent, false).into_iter().any(present);
            match op {
                CompareOp::Eq => Ok(!present),
                CompareOp::Ne => Ok(present),
                _ => Err(FilterError::filter(format!("`{path} {op} null`: null compares with eq and ne only"))),
            }
        }
        Filter::Compare(path, op, operand) => {
            let attr = Attr::of(path, parent, schema);
            for value in values(node, path, parent, true) {
                if compare(value, *op, operand, &attr)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Filter::ValuePath(path, inner) => {
            for value in values(node, path, parent, false) {
                if value.is_object() && eval(inner, value, Some(path), schema)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}

/// The attribute a comparison is about, with its characteristics and its name for errors.
struct Attr {
    name: String,
    case_exact: bool,
    date_time: bool,
}

impl Attr {
    fn of(path: &AttrPath, parent: Option<&AttrPath>, schema: &dyn AttributeTypes) -> Attr {
        let (top, sub) = match parent {
            Some(parent) => (parent, Some(path.name.as_str())),
            None => (path, path.sub.as_deref()),
        };
        let urn = (!top.in_core_schema()).then(|| top.urn.as_deref().unwrap_or_default().to_ascii_lowercase());
        let mut dotted = top.name.to_ascii_lowercase();
        if let Some(sub) = sub {
            dotted = format!("{dotted}.{}", sub.to_ascii_lowercase());
        }
        let urn = urn.as_deref();
        // A complex attribute compared as a whole is compared by its `value`.
        let case_exact = schema.case_exact(urn, &dotted)
            || (sub.is_none() && schema.case_exact(urn, &format!("{dotted}.value")));
        Attr { case_exact, date_time: schema.date_time(urn, &dotted), name: dotted }
    }
}

/// A member of a JSON object by a case-insensitive name.
fn member<'v>(object: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    object.get(name).or_else(|| object.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

/// The values `path` names in `node`, multi-valued attributes flattened. `compared`: a
/// complex value named without a sub-attribute stands for its `value` sub-attribute.
fn values<'v>(node: &'v Value, path: &AttrPath, parent: Option<&AttrPath>, compared: bool) -> Vec<&'v Value> {
    let Value::Object(object) = node else { return Vec::new() };
    let base = match (&path.urn, parent.is_some() || path.in_core_schema()) {
        (Some(urn), false) => match member(object, urn) {
            Some(Value::Object(extension)) => extension,
            _ => return Vec::new(),
        },
        _ => object,
    };
    let Some(top) = member(base, &path.name) else { return Vec::new() };
    let mut out = Vec::new();
    for value in flatten(top) {
        match (&path.sub, value) {
            (Some(sub), Value::Object(complex)) => out.extend(member(complex, sub).into_iter().flat_map(flatten)),
            (Some(_), _) => {}
            // One without a `value` stays whole, so that ordering it is refused.
            (None, Value::Object(complex)) if compared => out.push(member(complex, "value").unwrap_or(value)),
            (None, value) => out.push(value),
        }
    }
    out
}

fn flatten(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(items) => items.iter().collect(),
        value => vec![value],
    }
}

/// RFC 7644 `pr`: a non-empty value, or a complex value with a non-empty member.
fn present(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => items.iter().any(present),
        Value::Object(members) => members.values().any(present),
        Value::Bool(_) | Value::Number(_) => true,
    }
}

fn compare(value: &Value, op: CompareOp, operand: &Value, attr: &Attr) -> Result<bool, FilterError> {
    if op.is_ordering() && matches!(value, Value::Bool(_) | Value::Object(_) | Value::Array(_)) {
        return Err(FilterError::filter(format!("`{op}` is not defined on `{}`, which is not a string, number or dateTime", attr.name)));
    }
    let ordering = match (value, operand) {
        (Value::String(actual), Value::String(wanted)) if attr.date_time && !op.is_substring() => {
            let Some(wanted) = date_time(wanted) else {
                return Err(FilterError::filter(format!("`{}` is a dateTime: `{wanted}` is not one", attr.name)));
            };
            match date_time(actual) {
                Some(actual) => actual.cmp(&wanted),
                None => return Ok(false),
            }
        }
        (Value::String(actual), Value::String(wanted)) => {
            let (actual, wanted) = if attr.case_exact {
                (actual.clone(), wanted.clone())
            } else {
                (actual.to_lowercase(), wanted.to_lowercase())
            };
            match op {
                CompareOp::Co => return Ok(actual.contains(&wanted)),
                CompareOp::Sw => return Ok(actual.starts_with(&wanted)),
                CompareOp::Ew => return Ok(actual.ends_with(&wanted)),
                _ => actual.cmp(&wanted),
            }
        }
        (Value::Number(actual), Value::Number(wanted)) => match (actual.as_i64(), wanted.as_i64()) {
            (Some(a), Some(w)) => a.cmp(&w),
            _ => match actual.as_f64().zip(wanted.as_f64()).and_then(|(a, w)| a.partial_cmp(&w)) {
                Some(ordering) => ordering,
                None => return Ok(false),
            },
        },
        (Value::Bool(actual), Value::Bool(wanted)) => actual.cmp(wanted),
        // Different types are never equal, so only `ne` matches.
        _ => return Ok(op == CompareOp::Ne),
    };
    Ok(match op {
        CompareOp::Eq => ordering == Ordering::Equal,
        CompareOp::Ne => ordering != Ordering::Equal,
        CompareOp::Gt => ordering == Ordering::Greater,
        CompareOp::Ge => ordering != Ordering::Less,
        CompareOp::Lt => ordering == Ordering::Less,
        CompareOp::Le => ordering != Ordering::Greater,
        CompareOp::Co | CompareOp::Sw | CompareOp::Ew => false,
    })
}

/// An `xsd:dateTime` (RFC 7643 §2.3.5) as seconds and nanoseconds since the epoch, so that
/// offsets and fractions compare correctly. A time without an offset is taken as UTC.
fn date_time(text: &str) -> Option<(i64, u32)> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| digits_of(text.get(range)?);
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        let padded = format!("{:0<9}", &fraction[..len.min(9)]);
        nanos = padded.parse().ok()?;
        rest = &fraction[len..];
    }
    let offset = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (digits_of(rest.get(1..3)?)? * 3600 + digits_of(rest.get(4..6)?)? * 60)
        }
    };
    // Days from the civil date (Howard Hinnant's algorithm), proleptic Gregorian.
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hour * 3600 + minute * 60 + second - offset, nanos))
}

fn digits_of(text: &str) -> Option<i64> {
    text.bytes().all(|c| c.is_ascii_digit()).then(|| text.parse().ok())?
}
