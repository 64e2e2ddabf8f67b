//! Scenarios moderators upload, kept once per moderator and text.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Result, ScenarioEntry, UploadedScenario};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::db::{map_err, Db};

/// Keeps the first upload of a text by its moderator and answers the one kept.
pub(crate) async fn keep_scenario(writer: &PgPool, s: UploadedScenario) -> Result<UploadedScenario> {
    let entry = &s.entry;
    sqlx::query(
        "INSERT INTO scenarios (moderator_id, id, name, title, text, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING",
    )
    .bind(entry.moderator_id)
    .bind(&entry.id)
    .bind(&entry.name)
    .bind(&entry.title)
    .bind(&s.text)
    .bind(entry.created_at)
    .execute(writer)
    .await
    .map_err(map_err)?;
    scenario(writer, entry.moderator_id, &entry.id)
        .await?
        .ok_or_else(|| adjutant_store::StoreError::Database("a kept scenario is not there".into()))
}

pub(crate) async fn scenario(
    db: impl PgExecutor<'_>,
    moderator_id: Uuid,
    id: &str,
) -> Result<Option<UploadedScenario>> {
    let row = sqlx::query("SELECT * FROM scenarios WHERE moderator_id = $1 AND id = $2")
        .bind(moderator_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::uploaded_scenario)
}

pub(crate) async fn scenarios(
    db: impl PgExecutor<'_>,
    moderator_id: Uuid,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<ScenarioEntry>> {
    let rows = sqlx::query(
        "SELECT moderator_id, id, name, title, created_at FROM scenarios
         WHERE moderator_id = $1 AND id > $2 ORDER BY id LIMIT $3",
    )
    .bind(moderator_id)
    .bind(after.unwrap_or(""))
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::scenario_entry)
}
