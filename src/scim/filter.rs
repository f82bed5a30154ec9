//! The filter grammar of RFC 7644 §3.4.2.2: parsing into a `Filter`, and printing one back.
//! Evaluation against a resource is in `eval.rs`.
//!
//! ```text
//! FILTER    = attrExp / logExp / valuePath / *1"not" "(" FILTER ")"
//! valuePath = attrPath "[" valFilter "]"      ; valFilter: a FILTER without value paths
//! attrExp   = (attrPath SP "pr") / (attrPath SP compareOp SP compValue)
//! logExp    = FILTER SP ("and" / "or") SP FILTER
//! attrPath  = [URI ":"] ATTRNAME *1subAttr
//! ```
//! Precedence: `not` (which needs its parentheses) binds tightest, then `and`, then `or`;
//! both are left-associative. Operators, keywords and attribute names are case-insensitive.

use super::{AttrPath, FilterError, ScimType, MAX_FILTER_DEPTH, MAX_FILTER_LENGTH};
use serde_json::{Number, Value};
use std::fmt;

/// A parsed filter. Parentheses leave no node of their own: they only shape the tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `attr pr`: the attribute has a non-empty value.
    Present(AttrPath),
    /// `attr op value`; the value is a JSON string, number, boolean or null.
    Compare(AttrPath, CompareOp, Value),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
    /// `attr[filter]`: some value of a multi-valued complex attribute matches the inner
    /// filter, whose attribute names are that attribute's sub-attributes.
    ValuePath(AttrPath, Box<Filter>),
}

/// The attribute operators of RFC 7644 §3.4.2.2, Table 3 (`pr` is `Filter::Present`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Co,
    Sw,
    Ew,
    Gt,
    Ge,
    Lt,
    Le,
}

impl CompareOp {
    fn from_word(word: &str) -> Option<CompareOp> {
        const OPS: [(&str, CompareOp); 9] = [
            ("eq", CompareOp::Eq), ("ne", CompareOp::Ne), ("co", CompareOp::Co),
            ("sw", CompareOp::Sw), ("ew", CompareOp::Ew), ("gt", CompareOp::Gt),
            ("ge", CompareOp::Ge), ("lt", CompareOp::Lt), ("le", CompareOp::Le),
        ];
        OPS.iter().find(|(name, _)| word.eq_ignore_ascii_case(name)).map(|&(_, op)| op)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Co => "co",
            CompareOp::Sw => "sw",
            CompareOp::Ew => "ew",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
        }
    }

    /// `gt ge lt le`: defined on strings, numbers and dateTimes only.
    pub fn is_ordering(self) -> bool {
        matches!(self, CompareOp::Gt | CompareOp::Ge | CompareOp::Lt | CompareOp::Le)
    }

    /// `co sw ew`: substring matches, defined on strings only.
    pub fn is_substring(self) -> bool {
        matches!(self, CompareOp::Co | CompareOp::Sw | CompareOp::Ew)
    }
}

impl fmt::Display for CompareOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a filter (the `filter` query parameter, or the body of a search request).
pub fn parse(input: &str) -> Result<Filter, FilterError> {
    let mut parser = Parser::new(input, ScimType::InvalidFilter)?;
    let filter = parser.or()?;
    parser.end()?;
    Ok(filter)
}

impl fmt::Display for Filter {
    /// Prints a filter that parses back to the same tree: parentheses only where the
    /// precedence or left-associativity would otherwise regroup it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::Present(path) => write!(f, "{path} pr"),
            Filter::Compare(path, op, value) => write!(f, "{path} {op} {value}"),
            Filter::And(left, right) => {
                grouped(f, left, matches!(**left, Filter::Or(..)))?;
                f.write_str(" and ")?;
                grouped(f, right, matches!(**right, Filter::Or(..) | Filter::And(..)))
            }
            Filter::Or(left, right) => {
                write!(f, "{left} or ")?;
                grouped(f, right, matches!(**right, Filter::Or(..)))
            }
            Filter::Not(inner) => write!(f, "not ({inner})"),
            Filter::ValuePath(path, inner) => write!(f, "{path}[{inner}]"),
        }
    }
}

fn grouped(f: &mut fmt::Formatter<'_>, filter: &Filter, parens: bool) -> fmt::Result {
    if parens { write!(f, "({filter})") } else { write!(f, "{filter}") }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'a> {
    Open,
    Close,
    OpenBracket,
    CloseBracket,
    Str(String),
    Num(Number),
    /// A run of name characters: keyword, operator, literal or attribute path. A PATCH
    /// path's `.sub` after `]` is one too.
    Word(&'a str),
}

impl Tok<'_> {
    fn describe(&self) -> String {
        match self {
            Tok::Open => "`(`".into(),
            Tok::Close => "`)`".into(),
            Tok::OpenBracket => "`[`".into(),
            Tok::CloseBracket => "`]`".into(),
            Tok::Str(_) => "a string".into(),
            Tok::Num(n) => format!("the number {n}"),
            Tok::Word(w) => format!("`{w}`"),
        }
    }
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'$' | b'.' | b':')
}

/// Splits the input into tokens with their byte offsets. Whitespace separates tokens; the
/// RFC's single SP is not insisted on, as clients pad and URL-decoding turns `+` into spaces.
fn lex(input: &str, kind: ScimType) -> Result<Vec<(Tok<'_>, usize)>, FilterError> {
    let bytes = input.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let tok = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'(' => Tok::Open,
            b')' => Tok::Close,
            b'[' => Tok::OpenBracket,
            b']' => Tok::CloseBracket,
            b'"' => {
                // The end is the first quote not escaped; serde_json then decodes the escapes.
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if j >= bytes.len() {
                    return Err(error(kind, start, "a string is not closed"));
                }
                let text = serde_json::from_str::<String>(&input[i..=j])
                    .map_err(|_| error(kind, start, "a string has an invalid escape or character"))?;
                i = j;
                Tok::Str(text)
            }
            b'-' | b'0'..=b'9' => {
                let mut j = i + 1;
                while j < bytes.len() && matches!(bytes[j], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    j += 1;
                }
                let number = serde_json::from_str::<Number>(&input[i..j])
                    .map_err(|_| error(kind, start, format!("`{}` is not a JSON number", &input[i..j])))?;
                i = j - 1;
                Tok::Num(number)
            }
            c if is_name_char(c) => {
                let mut j = i + 1;
                while j < bytes.len() && is_name_char(bytes[j]) {
                    j += 1;
                }
                i = j - 1;
                Tok::Word(&input[start..j])
            }
            _ => {
                let ch = input[i..].chars().next().unwrap_or('?');
                return Err(error(kind, start, format!("unexpected character `{ch}`")));
            }
        };
        tokens.push((tok, start));
        i += 1;
    }
    Ok(tokens)
}

pub(crate) fn error(kind: ScimType, at: usize, what: impl fmt::Display) -> FilterError {
    FilterError { scim_type: kind, detail: format!("at byte {at}: {what}") }
}

/// A recursive-descent parser over the tokens; `path.rs` drives it for PATCH paths.
pub(crate) struct Parser<'a> {
    tokens: Vec<(Tok<'a>, usize)>,
    pos: usize,
    len: usize,
    depth: usize,
    /// Inside a value path's brackets: attribute names are sub-attributes, and value paths
    /// do not nest (RFC 7644's valFilter has none).
    in_brackets: bool,
    kind: ScimType,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(input: &'a str, kind: ScimType) -> Result<Parser<'a>, FilterError> {
        if input.len() > MAX_FILTER_LENGTH {
            return Err(FilterError {
                scim_type: kind,
                detail: format!("longer than {MAX_FILTER_LENGTH} bytes"),
            });
        }
        let tokens = lex(input, kind)?;
        Ok(Parser { tokens, pos: 0, len: input.len(), depth: 0, in_brackets: false, kind })
    }

    pub(crate) fn peek(&self) -> Option<&Tok<'a>> {
        self.tokens.get(self.pos).map(|(tok, _)| tok)
    }

    pub(crate) fn at(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.len, |&(_, at)| at)
    }

    pub(crate) fn next(&mut self) -> Option<Tok<'a>> {
        let tok = self.tokens.get(self.pos).map(|(tok, _)| tok.clone());
        self.pos += 1;
        tok
    }

    pub(crate) fn fail(&self, expected: &str) -> FilterError {
        let found = self.peek().map_or_else(|| "the end".to_string(), Tok::describe);
        error(self.kind, self.at(), format!("expected {expected}, found {found}"))
    }

    fn keyword(&mut self, word: &str) -> bool {
        let is = matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(word));
        if is {
            self.pos += 1;
        }
        is
    }

    fn expect(&mut self, tok: Tok<'static>, what: &str) -> Result<(), FilterError> {
        if self.peek() != Some(&tok) {
            return Err(self.fail(what));
        }
        self.pos += 1;
        Ok(())
    }

    pub(crate) fn end(&self) -> Result<(), FilterError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.fail("`and`, `or` or the end")),
        }
    }

    /// One level deeper (parentheses, `not`, brackets): refused past the bound, before
    /// recursing, so that no input can exhaust the stack.
    fn enter(&mut self) -> Result<(), FilterError> {
        self.depth += 1;
        if self.depth > MAX_FILTER_DEPTH {
            return Err(error(self.kind, self.at(), format!("nested deeper than {MAX_FILTER_DEPTH} levels")));
        }
        Ok(())
    }

    pub(crate) fn or(&mut self) -> Result<Filter, FilterError> {
        let mut left = self.and()?;
        while self.keyword("or") {
            left = Filter::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Filter, FilterError> {
        let mut left = self.term()?;
        while self.keyword("and") {
            left = Filter::And(Box::new(left), Box::new(self.term()?));
        }
        Ok(left)
    }

    /// A filter without a top-level `and`/`or`: grouping, `not`, a value path, or an
    /// attribute expression.
    fn term(&mut self) -> Result<Filter, FilterError> {
        let is_not = matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("not"))
            && self.tokens.get(self.pos + 1).map(|(tok, _)| tok) == Some(&Tok::Open);
        if is_not {
            self.pos += 1;
        }
        if self.peek() == Some(&Tok::Open) {
            self.enter()?;
            self.pos += 1;
            let inner = self.or()?;
            self.expect(Tok::Close, "`)`")?;
            self.depth -= 1;
            return Ok(if is_not { Filter::Not(Box::new(inner)) } else { inner });
        }
        let at = self.at();
        let path = match self.next() {
            Some(Tok::Word(word)) => self.attr_path(word, at)?,
            _ => {
                self.pos -= 1;
                return Err(self.fail("an attribute name, `(` or `not (`"));
            }
        };
        if self.peek() == Some(&Tok::OpenBracket) {
            let inner = self.value_filter(&path)?;
            return Ok(Filter::ValuePath(path, Box::new(inner)));
        }
        self.attr_exp(path)
    }

    /// `[valFilter]` after `path`, brackets included.
    pub(crate) fn value_filter(&mut self, path: &AttrPath) -> Result<Filter, FilterError> {
        if self.in_brackets {
            return Err(self.fail("an operator (value paths do not nest)"));
        }
        if path.sub.is_some() {
            return Err(error(self.kind, self.at(), "a value filter applies to a multi-valued attribute, not to a sub-attribute"));
        }
        self.enter()?;
        self.pos += 1;
        self.in_brackets = true;
        let inner = self.or()?;
        self.expect(Tok::CloseBracket, "`]`")?;
        self.in_brackets = false;
        self.depth -= 1;
        Ok(inner)
    }

    fn attr_exp(&mut self, path: AttrPath) -> Result<Filter, FilterError> {
        if self.keyword("pr") {
            return Ok(Filter::Present(path));
        }
        let op = match self.peek() {
            Some(Tok::Word(w)) => CompareOp::from_word(w),
            _ => None,
        };
        let Some(op) = op else {
            return Err(self.fail("an operator (eq ne co sw ew gt ge lt le pr)"));
        };
        self.pos += 1;
        let at = self.at();
        let value = match self.next() {
            Some(Tok::Str(s)) => Value::String(s),
            Some(Tok::Num(n)) => Value::Number(n),
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("true") => Value::Bool(true),
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("false") => Value::Bool(false),
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("null") => Value::Null,
            _ => {
                self.pos -= 1;
                return Err(self.fail("a value (a JSON string, a number, true, false or null)"));
            }
        };
        // RFC 7644 §3.4.2.2: ordering is defined on strings, numbers and dateTimes; the
        // substring operators compare strings.
        let refused = (op.is_substring() && !value.is_string())
            || (op.is_ordering() && !(value.is_string() || value.is_number()));
        if refused {
            return Err(error(self.kind, at, format!("`{op}` cannot compare with {value}")));
        }
        Ok(Filter::Compare(path, op, value))
    }

    /// Splits `[urn:]name[.sub]`. The URN ends at the last colon: URNs contain dots
    /// (`2.0`) and colons, attribute names neither.
    pub(crate) fn attr_path(&self, word: &str, at: usize) -> Result<AttrPath, FilterError> {
        let (urn, rest) = match word.rfind(':') {
            // `urn:` NID `:` NSS, then `:` and the attribute.
            Some(colon) if word[..colon].matches(':').count() >= 2
                && word.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("urn:")) => {
                (Some(word[..colon].to_string()), &word[colon + 1..])
            }
            Some(_) => return Err(error(self.kind, at, format!("`{word}`: only a URN may contain `:`"))),
            None => (None, word),
        };
        let mut parts = rest.split('.');
        let name = parts.next().unwrap_or_default();
        let sub = parts.next();
        if parts.next().is_some() {
            return Err(error(self.kind, at, format!("`{word}`: an attribute path has at most one sub-attribute")));
        }
        for part in std::iter::once(name).chain(sub) {
            if !is_attr_name(part) {
                return Err(error(self.kind, at, format!("`{word}` is not an attribute path")));
            }
        }
        if self.in_brackets && (urn.is_some() || sub.is_some()) {
            return Err(error(self.kind, at, format!("`{word}`: inside brackets, name a sub-attribute only")));
        }
        Ok(AttrPath { urn, name: name.to_string(), sub: sub.map(str::to_string) })
    }
}

/// ATTRNAME (RFC 7643 §2.1, with `$ref`): a letter, then letters, digits, `-` and `_`.
pub(crate) fn is_attr_name(name: &str) -> bool {
    let name = name.strip_prefix('$').unwrap_or(name);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
