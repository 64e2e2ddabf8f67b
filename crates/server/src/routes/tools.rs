//! The public calculator: the same arithmetic the server uses, for anyone to check by hand.

use adjutant_rules::{DigitPositions, ReinforcementRoll, ResultNumber, TimeOfDay};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{ApiResult, AppError};
use crate::extract::ApiQuery;
use crate::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/tools/result-number", get(result_number))
        .route("/v1/tools/reinforcement", get(reinforcement))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ResultNumberQuery {
    /// Time of day, H:MM:SS on a 24-hour clock (e.g. 9:51:45).
    #[param(example = "9:51:45", pattern = "^([01]?[0-9]|2[0-3]):[0-5]?[0-9]:[0-5]?[0-9]$")]
    pub time: String,
    /// 9 (default): decimals 9 and 10 of √N; 8: decimals 8 and 9.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 8, maximum = 9)]
    pub first_digit: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ResultNumberAnswer {
    #[schema(example = 95145)]
    pub n: u32,
    #[schema(example = "308.455831522115")]
    pub sqrt: String,
    #[schema(example = 9)]
    pub first_digit: u32,
    /// The two decimals taken.
    #[schema(example = "21")]
    pub digits: String,
    #[schema(example = 21)]
    pub result: u32,
    /// A `bc` command that shows √N.
    pub bc: String,
}

/// The result number of a time of day.
#[utoipa::path(get, path = "/v1/tools/result-number", tag = "tools", params(ResultNumberQuery),
    responses((status = 200, body = ResultNumberAnswer), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn result_number(ApiQuery(q): ApiQuery<ResultNumberQuery>) -> ApiResult<Json<ResultNumberAnswer>> {
    let time = TimeOfDay::parse(&q.time).map_err(|r| AppError::bad_request("query.time", r.rule, r.detail))?;
    let digits = DigitPositions::from_first(q.first_digit.unwrap_or(9)).ok_or_else(|| {
        AppError::bad_request(
            "query.first_digit",
            "result_number.digit_positions",
            "first_digit is 9 (decimals 9 and 10) or 8 (decimals 8 and 9)",
        )
    })?;
    let r = ResultNumber::of(time.post_number(adjutant_rules::ClockFormat::H24), digits);
    Ok(Json(ResultNumberAnswer {
        n: r.n,
        first_digit: r.first_digit,
        digits: format!("{:02}", r.result),
        result: r.result,
        bc: r.bc_command(),
        sqrt: r.sqrt,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReinforcementQuery {
    /// The post's milliseconds, 0–999.
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 999)]
    pub ms: u32,
    /// Cities held among E, G, I, O, M and L (0–6).
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 6)]
    pub cities: u32,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReinforcementAnswer {
    pub ms: u32,
    pub cities: u32,
    /// ms mod 6.
    #[schema(example = 3)]
    pub remainder: u32,
    /// Whether the remainder is at most the cities held: one reinforcement point gained.
    #[schema(example = true)]
    pub gains: bool,
}

/// The Rebel reinforcement roll.
#[utoipa::path(get, path = "/v1/tools/reinforcement", tag = "tools", params(ReinforcementQuery),
    responses((status = 200, body = ReinforcementAnswer), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn reinforcement(ApiQuery(q): ApiQuery<ReinforcementQuery>) -> ApiResult<Json<ReinforcementAnswer>> {
    let roll = ReinforcementRoll::roll(q.ms, q.cities)
        .map_err(|r| AppError::bad_request(format!("query.{}", r.field), r.rule, r.detail))?;
    Ok(Json(ReinforcementAnswer { ms: roll.ms, cities: roll.cities, remainder: roll.remainder, gains: roll.gains }))
}
