//! PostgreSQL for the tests. The cluster comes from `AUTHRIM_TEST_POSTGRES_URL` (a superuser
//! URL; `scripts/test.sh` starts a throwaway cluster and sets it); each test gets a database of
//! its own. Without it the PostgreSQL tests fail, unless `AUTHRIM_TEST_POSTGRES=skip` says,
//! explicitly, to leave PostgreSQL out of this run.

fn postgres_skipped() -> bool {
    std::env::var("AUTHRIM_TEST_POSTGRES_URL").is_err() && std::env::var("AUTHRIM_TEST_POSTGRES").as_deref() == Ok("skip")
}

/// A fresh database on the test cluster; `None` only when PostgreSQL is explicitly skipped.
pub async fn fresh_database() -> Option<String> {
    if postgres_skipped() {
        eprintln!("PostgreSQL left out of this run (AUTHRIM_TEST_POSTGRES=skip)");
        return None;
    }
    let admin = std::env::var("AUTHRIM_TEST_POSTGRES_URL").expect(
        "AUTHRIM_TEST_POSTGRES_URL is not set: run ./scripts/test.sh (it starts a throwaway PostgreSQL), \
         or set AUTHRIM_TEST_POSTGRES=skip to leave PostgreSQL out",
    );
    let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.expect("connect to the test cluster");
    tokio::spawn(conn);
    let name = format!("authrim_t_{}", authrim::util::hex(&authrim::util::random_bytes::<6>()));
    client.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create the test database");
    let (base, _) = admin.rsplit_once('/').expect("URL with a database name");
    Some(format!("{base}/{name}"))
}


/// `scripts/pg.sh`, for tests that run a cluster of their own (to take it down).
#[allow(dead_code)] // used by the integration tests, not by the contract suite
pub fn cluster_script() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg.sh")
}
