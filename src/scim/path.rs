//! The PATCH `path` grammar of RFC 7644 §3.5.2:
//!
//! ```text
//! PATH = attrPath / valuePath [subAttr]
//! ```
//! i.e. `attr`, `attr.sub`, `urn:…:attr[.sub]`, `attr[filter]` and `attr[filter].sub`.
//! Every error is `invalidPath`, including one inside the value filter: it is the path the
//! client got wrong.

use super::filter::{is_attr_name, Filter, Parser, Tok};
use super::{AttrPath, FilterError, ScimType};
use std::fmt;

/// A parsed PATCH path: the attribute the operation targets, which of its values (for a
/// multi-valued attribute with a value filter), and the sub-attribute within them.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// The attribute, with its URN and its sub-attribute: for `emails[type eq "work"].value`
    /// the name is `emails` and the sub-attribute `value`, as for `emails.value`.
    pub attr: AttrPath,
    /// `[filter]`: the values of a multi-valued attribute the operation applies to; its
    /// attribute names are sub-attributes of `attr`.
    pub value_filter: Option<Filter>,
}

/// Parses the `path` of a PATCH operation.
pub fn parse(input: &str) -> Result<Path, FilterError> {
    let mut parser = Parser::new(input, ScimType::InvalidPath)?;
    let Some(Tok::Word(word)) = parser.peek().cloned() else {
        return Err(parser.fail("an attribute path"));
    };
    let at = parser.at();
    parser.next();
    let mut attr = parser.attr_path(word, at)?;
    let mut value_filter = None;
    if parser.peek() == Some(&Tok::OpenBracket) {
        value_filter = Some(parser.value_filter(&attr)?);
        // `].sub`: the lexer reads `.sub` as one word.
        if let Some(Tok::Word(word)) = parser.peek().cloned() {
            match word.strip_prefix('.') {
                Some(sub) if is_attr_name(sub) => {
                    parser.next();
                    attr.sub = Some(sub.to_string());
                }
                _ => return Err(parser.fail("`.` and a sub-attribute, or the end")),
            }
        }
    }
    if parser.peek().is_some() {
        return Err(parser.fail("`[`, `].sub` or the end"));
    }
    Ok(Path { attr, value_filter })
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(filter) = &self.value_filter else { return write!(f, "{}", self.attr) };
        let whole = AttrPath { sub: None, ..self.attr.clone() };
        write!(f, "{whole}[{filter}]")?;
        match &self.attr.sub {
            Some(sub) => write!(f, ".{sub}"),
            None => Ok(()),
        }
    }
}
