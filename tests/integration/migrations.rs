//! Upgrades keep data on PostgreSQL, as `db::schema`'s unit test shows for SQLite: at every
//! schema version each table is given rows (a value of each column's type, unlike any other
//! row's), and once every later migration has run each row is still there with every value it
//! was written with. Issue 31's migration (the tenant in every key) must pass it too.

use authrim::db::postgres::{migrate_to, versions, PgDb, PgOptions};
use authrim::db::{Sql, Value};

fn tables(sql: &mut dyn Sql) -> Vec<String> {
    sql.query("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY table_name", &[])
        .unwrap()
        .iter()
        .map(|r| r.text(0).unwrap())
        .collect()
}

fn columns(sql: &mut dyn Sql, table: &str) -> Vec<String> {
    sql.query("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?1", authrim::params![table])
        .unwrap()
        .iter()
        .map(|r| r.text(0).unwrap())
        .collect()
}

fn sample_row(sql: &mut dyn Sql, table: &str, n: i64) -> Vec<(String, Value)> {
    sql.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?1 ORDER BY ordinal_position", authrim::params![table])
        .unwrap()
        .iter()
        .map(|r| {
            let (name, ty) = (r.text(0).unwrap(), r.text(1).unwrap());
            let v = match ty.as_str() {
                "bigint" | "integer" | "smallint" => Value::Int(n),
                "boolean" => Value::Int(n % 2),
                "bytea" => Value::Blob(format!("{table}.{name}.{n}").into_bytes()),
                _ => Value::Text(format!("{table}.{name}.{n}")),
            };
            (name, v)
        })
        .collect()
}

#[tokio::test]
async fn every_row_written_at_any_version_survives_every_later_migration_on_postgres() {
    let Some(url) = crate::pg_cluster::fresh_database().await else { return };
    let db = PgDb::unmigrated(&url, PgOptions { pool_size: 2, timeout: std::time::Duration::from_secs(10) }).unwrap();
    let mut written: Vec<(i64, String, Vec<(String, Value)>)> = Vec::new();
    let mut n = 0;
    for version in versions() {
        let rows = db
            .run(true, move |sql| {
                assert_eq!(migrate_to(sql, version)?, version);
                let mut rows = Vec::new();
                for table in tables(sql) {
                    for _ in 0..2 {
                        n += 1;
                        let row = sample_row(sql, &table, n);
                        let names: Vec<&str> = row.iter().map(|(c, _)| c.as_str()).collect();
                        let marks: Vec<String> = (1..=row.len()).map(|i| format!("?{i}")).collect();
                        let values: Vec<Value> = row.iter().map(|(_, v)| v.clone()).collect();
                        sql.execute(&format!("INSERT INTO {table} ({}) VALUES ({})", names.join(", "), marks.join(", ")), &values)
                            .unwrap_or_else(|e| panic!("version {version}: {table}: {e}"));
                        rows.push((version, table.clone(), row));
                    }
                }
                Ok((rows, n))
            })
            .await
            .unwrap();
        n = rows.1;
        written.extend(rows.0);
    }
    let count = written.len();
    let missing = db
        .run(true, move |sql| {
            migrate_to(sql, i64::MAX)?;
            let now = tables(sql);
            let mut missing = Vec::new();
            for (version, table, row) in written {
                if !now.contains(&table) {
                    missing.push(format!("table {table} (written at version {version}) is gone"));
                    continue;
                }
                let mut cond: Vec<String> = row.iter().enumerate().map(|(i, (c, _))| format!("{c} IS NOT DISTINCT FROM ?{}", i + 1)).collect();
                // A row written before tenants is the default tenant's.
                if !row.iter().any(|(c, _)| c == "tenant_id") && columns(sql, &table).iter().any(|c| c == "tenant_id") {
                    cond.push("tenant_id = 0".into());
                }
                let values: Vec<Value> = row.iter().map(|(_, v)| v.clone()).collect();
                let found = sql.query(&format!("SELECT COUNT(*) FROM {table} WHERE {}", cond.join(" AND ")), &values)?[0].i64(0)?;
                if found != 1 {
                    missing.push(format!("a row of {table} written at version {version}: {row:?}"));
                }
            }
            Ok(missing)
        })
        .await
        .unwrap();
    assert!(count > 2 * versions().len(), "rows in every version's tables");
    assert!(missing.is_empty(), "did not survive the migrations: {missing:#?}");
    db.close();
}

/// Issue 31, as `db::schema`'s test for SQLite: every table but the sharded stores (whose keys
/// are hashes that frame the tenant) has `tenant_id`, and it leads every primary key and
/// unique index but that of a random id (the logout outbox's `jti`).
#[tokio::test]
async fn the_tenant_leads_every_key_people_or_tokens_choose_on_postgres() {
    let Some(url) = crate::pg_cluster::fresh_database().await else { return };
    let db = PgDb::unmigrated(&url, PgOptions { pool_size: 2, timeout: std::time::Duration::from_secs(10) }).unwrap();
    let problems = db
        .run(true, |sql| {
            migrate_to(sql, i64::MAX)?;
            let hashed = ["auth_codes", "sessions", "challenges", "revoked_tokens", "refresh_families", "device_requests", "ciba_requests"];
            let mut problems = Vec::new();
            for table in tables(sql) {
                if hashed.contains(&table.as_str()) {
                    continue;
                }
                if !columns(sql, &table).iter().any(|c| c == "tenant_id") {
                    problems.push(format!("{table} has no tenant_id"));
                }
                // The tenants table itself: a slug and a host name one tenant across the deployment.
                if ["logout_outbox", "tenants", "tenant_hosts"].contains(&table.as_str()) {
                    continue;
                }
                // The first column of each unique index (primary keys included).
                let firsts = sql.query(
                    "SELECT i.relname, a.attname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
                     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
                     WHERE x.indisunique AND t.relname = ?1 AND t.relnamespace = to_regnamespace(current_schema())::oid",
                    authrim::params![table.as_str()],
                )?;
                for r in firsts {
                    if r.text(1)? != "tenant_id" && !(r.text(1)? == "id" && ["audit_events", "mail_outbox"].contains(&table.as_str())) {
                        problems.push(format!("{table}: unique index {} begins with {}", r.text(0)?, r.text(1)?));
                    }
                }
            }
            Ok(problems)
        })
        .await
        .unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    db.close();
}
