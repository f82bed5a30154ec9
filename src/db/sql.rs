//! A narrow SQL seam for the code off the hot path (registry, keys, audit, migrations, CLI),
//! so that one function body serves SQLite and PostgreSQL. Statements are written once in the
//! common dialect with `?N` placeholders (rewritten to `$N` for PostgreSQL); values travel as
//! four types, the ones both engines store without surprise: 64-bit integers, text, bytes, null.
//!
//! The hot-path stores do not use this: each backend has its own, with statements made for it.

use super::{StoreError, StoreResult};

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<crate::tenant::TenantId> for Value {
    fn from(v: crate::tenant::TenantId) -> Self {
        Value::Int(i64::from(v.0))
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(v as i64)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// `params![a, b]`: a parameter list for [`Sql`].
#[macro_export]
macro_rules! params {
    ($($v:expr),* $(,)?) => { &[$($crate::db::Value::from($v)),*][..] };
}

/// One result row; columns are read by position.
#[derive(Debug, Clone)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn col(&self, i: usize) -> StoreResult<&Value> {
        self.0.get(i).ok_or_else(|| StoreError::Database(format!("no column {i}")))
    }

    /// A `tenant_id` column.
    pub fn tenant(&self, i: usize) -> StoreResult<crate::tenant::TenantId> {
        u32::try_from(self.i64(i)?).map(crate::tenant::TenantId).map_err(|_| StoreError::Database(format!("column {i}: not a tenant id")))
    }

    pub fn i64(&self, i: usize) -> StoreResult<i64> {
        match self.col(i)? {
            Value::Int(v) => Ok(*v),
            other => Err(StoreError::Database(format!("column {i}: expected an integer, got {other:?}"))),
        }
    }

    pub fn opt_i64(&self, i: usize) -> StoreResult<Option<i64>> {
        match self.col(i)? {
            Value::Null => Ok(None),
            _ => self.i64(i).map(Some),
        }
    }

    pub fn opt_text(&self, i: usize) -> StoreResult<Option<String>> {
        match self.col(i)? {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s.clone())),
            other => Err(StoreError::Database(format!("column {i}: expected text, got {other:?}"))),
        }
    }

    pub fn text(&self, i: usize) -> StoreResult<String> {
        self.opt_text(i)?.ok_or_else(|| StoreError::Database(format!("column {i} is null")))
    }

    pub fn opt_blob(&self, i: usize) -> StoreResult<Option<Vec<u8>>> {
        match self.col(i)? {
            Value::Null => Ok(None),
            Value::Blob(b) => Ok(Some(b.clone())),
            other => Err(StoreError::Database(format!("column {i}: expected bytes, got {other:?}"))),
        }
    }

    pub fn blob(&self, i: usize) -> StoreResult<Vec<u8>> {
        self.opt_blob(i)?.ok_or_else(|| StoreError::Database(format!("column {i} is null")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A connection inside a transaction (the caller's `Database::write` or `read` opened it).
pub trait Sql {
    fn dialect(&self) -> Dialect;
    fn execute(&mut self, sql: &str, params: &[Value]) -> StoreResult<u64>;
    fn query(&mut self, sql: &str, params: &[Value]) -> StoreResult<Vec<Row>>;
    /// Several statements, no parameters (migrations).
    fn batch(&mut self, sql: &str) -> StoreResult<()>;

    fn query_opt(&mut self, sql: &str, params: &[Value]) -> StoreResult<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Serialise this transaction against every other holder of `lock` (on every node).
    /// SQLite needs nothing: its write transactions already exclude each other.
    fn lock_exclusive(&mut self, lock: AppLock) -> StoreResult<()>;
}

/// Advisory locks taken by transactions that must not interleave across nodes.
#[derive(Debug, Clone, Copy)]
#[repr(i64)]
pub enum AppLock {
    Migrations = 0x4155_5448_0001,
    SigningKeys = 0x4155_5448_0002,
    /// Dynamic registration: the count of registered clients and the insert are one step.
    Registration = 0x4155_5448_0003,
}

/// `?1` → `$1`. Our statements never hold a `?` inside a string literal.
pub fn to_postgres_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|n| n.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// SQLite through rusqlite.
pub struct SqliteSql<'a>(pub &'a rusqlite::Connection);

impl rusqlite::types::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

impl Sql for SqliteSql<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> StoreResult<u64> {
        Ok(self.0.prepare_cached(sql)?.execute(rusqlite::params_from_iter(params))? as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> StoreResult<Vec<Row>> {
        use rusqlite::types::ValueRef;
        let mut stmt = self.0.prepare_cached(sql)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Int(v as i64),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                });
            }
            out.push(Row(row));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> StoreResult<()> {
        Ok(self.0.execute_batch(sql)?)
    }

    fn lock_exclusive(&mut self, _lock: AppLock) -> StoreResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_rewritten_for_postgres() {
        assert_eq!(to_postgres_placeholders("SELECT a FROM t WHERE b = ?1 AND c = ?12"), "SELECT a FROM t WHERE b = $1 AND c = $12");
    }

    #[test]
    fn sqlite_round_trips_every_value_type() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut sql = SqliteSql(&conn);
        sql.execute("CREATE TABLE t (i INTEGER, s TEXT, b BLOB, n TEXT)", &[]).unwrap();
        sql.execute("INSERT INTO t VALUES (?1, ?2, ?3, ?4)", crate::params![7i64, "x", vec![1u8, 2], None::<String>]).unwrap();
        let row = sql.query_opt("SELECT i, s, b, n FROM t WHERE i = ?1", crate::params![7i64]).unwrap().unwrap();
        assert_eq!((row.i64(0).unwrap(), row.text(1).unwrap(), row.blob(2).unwrap()), (7, "x".into(), vec![1, 2]));
        assert_eq!(row.opt_text(3).unwrap(), None);
        assert!(row.i64(1).is_err(), "a type mismatch is an error, not a panic");
    }
}
