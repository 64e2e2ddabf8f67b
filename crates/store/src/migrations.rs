//! Each dialect's schema migrations, built into the binary (`build.rs` lists the folders).
//!
//! They are read as sqlx's own folder reader reads them (`{version}_{description}.sql`; the
//! description's underscores become spaces; `-- no-transaction` on the first line runs a file
//! outside a transaction), so a database migrated by any earlier build finds each file it ran
//! unchanged: the same version and the same checksum.

use std::borrow::Cow;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migrate, MigrateError, Migration, MigrationSource, MigrationType, Migrator};
use sqlx::Acquire;

use crate::StoreError;

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// One dialect's migration files, as (file name, SQL) pairs.
#[derive(Debug, Clone, Copy)]
pub struct Embedded(&'static [(&'static str, &'static str)]);

/// `migrations/sqlite`.
pub const SQLITE: Embedded = Embedded(SQLITE_FILES);
/// `migrations/postgres`.
pub const POSTGRES: Embedded = Embedded(POSTGRES_FILES);

impl Embedded {
    /// Brings the database behind `conn` up to date: the files it has not run yet, in order of
    /// their versions, each in a transaction of its own.
    pub async fn run<'a, A>(self, conn: A) -> Result<(), StoreError>
    where
        A: Acquire<'a>,
        <A::Connection as Deref>::Target: Migrate,
    {
        let failed = |e: MigrateError| StoreError::Database(format!("migrations: {e}"));
        Migrator::new(self).await.map_err(failed)?.run(conn).await.map_err(failed)
    }

    /// The files as migrations, in order of their versions.
    pub fn migrations(self) -> Result<Vec<Migration>, String> {
        let mut migrations = self.0.iter().map(|&(file, sql)| migration(file, sql)).collect::<Result<Vec<_>, _>>()?;
        migrations.sort_by_key(|migration| migration.version);
        Ok(migrations)
    }
}

fn migration(file: &str, sql: &'static str) -> Result<Migration, String> {
    let (version, rest) =
        file.split_once('_').ok_or_else(|| format!("{file}: not `{{version}}_{{description}}.sql`"))?;
    let version = version.parse().map_err(|_| format!("{file}: the version is not a whole number"))?;
    let migration_type = MigrationType::from_filename(rest);
    if migration_type != MigrationType::Simple {
        return Err(format!("{file}: reversible migrations are not used here"));
    }
    let description = rest.trim_end_matches(migration_type.suffix()).replace('_', " ");
    let no_tx = sql.starts_with("-- no-transaction");
    Ok(Migration::new(version, Cow::Owned(description), migration_type, Cow::Borrowed(sql), no_tx))
}

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send>> {
        Box::pin(async move { self.migrations().map_err(BoxDynError::from) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_both_folders_is_a_migration_in_order() {
        for (embedded, folder) in [(SQLITE, "sqlite"), (POSTGRES, "postgres")] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(folder);
            let on_disk = std::fs::read_dir(&dir).unwrap().count();
            let migrations = embedded.migrations().unwrap();
            assert_eq!(migrations.len(), on_disk, "{folder}");
            assert!(migrations.windows(2).all(|pair| pair[0].version < pair[1].version), "{folder}");
            assert_eq!((migrations[0].version, &*migrations[0].description), (1, "log"), "{folder}");
            for migration in &migrations {
                let file = format!("{:04}_{}.sql", migration.version, migration.description.replace(' ', "_"));
                assert_eq!(migration.sql, std::fs::read_to_string(dir.join(&file)).unwrap(), "{folder}/{file}");
            }
        }
    }

    #[test]
    fn a_file_name_reads_as_sqlx_reads_it() {
        let read = migration("0014_posts_by_author_day.sql", "-- no-transaction\nSELECT 1;").unwrap();
        assert_eq!((read.version, &*read.description, read.no_tx), (14, "posts by author day", true));
        assert!(!migration("0001_log.sql", "SELECT 1;").unwrap().no_tx);
        assert!(migration("log.sql", "").is_err());
        assert!(migration("x_log.sql", "").is_err());
        assert!(migration("0002_undo.down.sql", "").is_err());
    }
}
