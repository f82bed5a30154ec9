//! How the four `Value` types cross into PostgreSQL and back.

use crate::db::Value;
use bytes::BytesMut;
use postgres_types::{FromSql, IsNull, ToSql, Type};
use std::error::Error;

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ => Err(format!("an integer cannot be bound to a {ty} parameter").into()),
            },
            Value::Text(s) if <&str as ToSql>::accepts(ty) => s.as_str().to_sql(ty, out),
            Value::Blob(b) if *ty == Type::BYTEA => b.as_slice().to_sql(ty, out),
            other => Err(format!("{other:?} cannot be bound to a {ty} parameter").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true // checked per value in `to_sql`
    }

    postgres_types::to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(<Vec<u8>>::from_sql(ty, raw)?),
            _ => Value::Text(String::from_sql(ty, raw)?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::INT8 | Type::INT4 | Type::INT2 | Type::BOOL | Type::BYTEA) || <String as FromSql>::accepts(ty)
    }
}
