//! The public calculators (`/v1/tools/*`): the same arithmetic the server uses, for anyone to
//! check by hand — the result number, the reinforcement roll, a sealed-delay chain, and a Short
//! ACW battle worked out in full.

use adjutant_rules::short_acw::{self, Defence, VictoryRounding};
use adjutant_rules::{DigitPositions, ReinforcementRoll, ResultNumber, TimeOfDay};
use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::campaign::ClockSetting;
use crate::error::{ApiResult, AppError};
use crate::extract::{query_of, ApiQuery};
use crate::remembered::Remembered;
use crate::views::ResultNumberView;
use crate::AppState;

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

#[derive(Debug, Serialize, ToSchema)]
pub struct SealedDelayAnswer {
    /// `s_{k-1}` = SHA-256 of the secret's 64 characters, in hex.
    pub previous: String,
    /// SHA-256 of the secret followed by the post hash (128 characters), in hex.
    pub digest: String,
    /// The digest's first 16 hex digits, and their value.
    pub first_8_bytes: String,
    pub first_8_bytes_decimal: String,
    /// That value mod 60,000.
    pub delay_ms: u64,
    /// The stamp and stamp + delay, RFC 3339 UTC with milliseconds.
    pub stamp: String,
    pub result_time: String,
    /// The result time on the campaign's clock (H:MM:SS).
    pub time_of_day: String,
    pub result_number: ResultNumberView,
    /// Shell commands that redo each step with `sha256sum` and `bc`.
    pub commands: Vec<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(result_number))
        .routes(routes!(reinforcement))
        .routes(routes!(sealed_delay))
        .routes(routes!(combat))
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

/// The result numbers asked for, by the text of the query (see [`Remembered`]).
static RESULT_NUMBERS: Remembered = Remembered::new();

/// The result number of a time of day. A query asked before is answered with the bytes
/// written for it then: the answer is a function of the query alone.
#[utoipa::path(get, path = "/v1/tools/result-number", tag = "tools", params(ResultNumberQuery),
    responses((status = 200, body = ResultNumberAnswer), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn result_number(uri: Uri) -> ApiResult<Response> {
    let query = uri.query().unwrap_or_default();
    if let Some(answer) = RESULT_NUMBERS.get(query) {
        return Ok(json_bytes(answer));
    }
    let answer = Bytes::from(
        serde_json::to_vec(&result_number_of(query_of(&uri)?)?).map_err(|e| AppError::Internal(e.to_string()))?,
    );
    RESULT_NUMBERS.keep(query, answer.clone());
    Ok(json_bytes(answer))
}

fn result_number_of(q: ResultNumberQuery) -> ApiResult<ResultNumberAnswer> {
    let time = TimeOfDay::parse(&q.time).map_err(|r| AppError::bad_request("query.time", r.rule, r.detail))?;
    let digits = DigitPositions::from_first(q.first_digit.unwrap_or(9)).ok_or_else(|| {
        AppError::bad_request(
            "query.first_digit",
            "result_number.digit_positions",
            "first_digit is 9 (decimals 9 and 10) or 8 (decimals 8 and 9)",
        )
    })?;
    let r = ResultNumber::of(time.post_number(adjutant_rules::ClockFormat::H24), digits);
    Ok(ResultNumberAnswer {
        n: r.n,
        first_digit: r.first_digit,
        digits: r.digits(),
        result: r.result,
        bc: r.bc_command(),
        sqrt: r.sqrt,
    })
}

/// JSON already written, answered as [`Json`] answers.
fn json_bytes(body: Bytes) -> Response {
    ([(CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
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

/// The Rebel reinforcement roll.
#[utoipa::path(get, path = "/v1/tools/reinforcement", tag = "tools", params(ReinforcementQuery),
    responses((status = 200, body = ReinforcementAnswer), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn reinforcement(ApiQuery(q): ApiQuery<ReinforcementQuery>) -> ApiResult<Json<ReinforcementAnswer>> {
    let roll = ReinforcementRoll::roll(q.ms, q.cities)
        .map_err(|r| AppError::bad_request(format!("query.{}", r.field), r.rule, r.detail))?;
    Ok(Json(ReinforcementAnswer { ms: roll.ms, cities: roll.cities, remainder: roll.remainder, gains: roll.gains }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SealedDelayQuery {
    /// The chain secret `s_k` a battle's outcome revealed (64 lower-case hex digits).
    #[param(pattern = "^[0-9a-f]{64}$")]
    pub secret: String,
    /// The battle post's chain hash (64 lower-case hex digits).
    #[param(pattern = "^[0-9a-f]{64}$")]
    pub post_hash: String,
    /// The post's stamp in milliseconds since 1970-01-01T00:00:00Z.
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 253_402_300_739_999_i64)]
    pub stamp_ms: i64,
    /// The campaign clock's IANA time zone (default UTC).
    #[param(schema_with = crate::campaign::time_zone_schema)]
    pub time_zone: Option<String>,
    /// `24h` (default) or `12h`.
    #[param(pattern = "^(24h|12h)$")]
    pub clock: Option<String>,
    /// 9 (default): decimals 9 and 10 of √N; 8: decimals 8 and 9.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 8, maximum = 9)]
    pub first_digit: Option<u32>,
}

/// A sealed-delay battle's result time and result number, from the secret its outcome revealed
/// and the post's hash and stamp (docs/fairness.md).
#[utoipa::path(get, path = "/v1/tools/sealed-delay", tag = "tools", params(SealedDelayQuery),
    responses((status = 200, body = SealedDelayAnswer), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn sealed_delay(ApiQuery(q): ApiQuery<SealedDelayQuery>) -> ApiResult<Json<SealedDelayAnswer>> {
    use adjutant_rules::result_time::{is_secret_text, ChainSecret};
    for (field, value) in [("query.secret", &q.secret), ("query.post_hash", &q.post_hash)] {
        if !is_secret_text(value) {
            return Err(AppError::bad_request(field, "sealed_delay.hex", "64 lower-case hexadecimal digits"));
        }
    }
    let stamp = (0..=253_402_300_739_999)
        .contains(&q.stamp_ms)
        .then(|| chrono::DateTime::from_timestamp_millis(q.stamp_ms))
        .flatten()
        .ok_or_else(|| {
            AppError::bad_request(
                "query.stamp_ms",
                "sealed_delay.stamp",
                "milliseconds since 1970, up to the year 9999",
            )
        })?;
    let settings = crate::campaign::CampaignSettings {
        time_zone: q.time_zone.clone().unwrap_or_else(|| "UTC".into()),
        clock: match q.clock.as_deref() {
            None | Some("24h") => ClockSetting::H24,
            Some("12h") => ClockSetting::H12,
            Some(_) => {
                return Err(AppError::bad_request("query.clock", "campaign.clock", "the clock is `24h` or `12h`"))
            }
        },
        first_digit: q.first_digit.unwrap_or(9),
        ..Default::default()
    };
    let clock = settings.clock_of().map_err(|e| e.at("query.", axum::http::StatusCode::BAD_REQUEST))?;
    let secret = ChainSecret {
        draw: 1,
        chain: 0,
        position: 1,
        secret: q.secret.clone(),
        commitment: String::new(),
        next_commitment: None,
    };
    let working = secret.delay(&q.post_hash, stamp);
    let result_time = working.result_time().unwrap_or(stamp);
    let t = clock.time_of_day(result_time);
    let r = clock.result_number(result_time);
    Ok(Json(SealedDelayAnswer {
        commands: working.commands(),
        previous: working.previous,
        digest: working.digest,
        first_8_bytes: working.first_8_bytes,
        first_8_bytes_decimal: working.first_8_bytes_decimal,
        delay_ms: working.delay_ms,
        stamp: working.stamp,
        result_time: working.result_time,
        time_of_day: format!("{}:{:02}:{:02}", t.hour_on(clock.format), t.minute, t.second),
        result_number: ResultNumberView::from(&r),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CombatQuery {
    /// Attacker's factors.
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 10000)]
    pub attacker: u32,
    /// Defender's factors (raw); with `defender_fortified`, the factors of the defenders that are
    /// not fortified.
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 10000)]
    pub defender: u32,
    /// `open`, `woods`, `river` or `fortified` (every defender fortified). With
    /// `defender_fortified`, `open`, `woods` or `river` for the hex, and fortification counts unit
    /// by unit.
    #[param(pattern = "^(open|woods|river|fortified)$")]
    pub defence: String,
    /// The factors of the fortified defenders, given apart from `defender` (D is the sum): D′
    /// counts these ×1½ and `defender` ×1, or every factor ×2 with `defence=woods` or `river`
    /// (ruling 2, unit by unit). With `defence=fortified` every defender counts ×1½ as before.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0, maximum = 10000)]
    pub defender_fortified: Option<u32>,
    /// The attack post's time of day, H:MM:SS on a 24-hour clock.
    #[param(example = "9:51:45", pattern = "^([01]?[0-9]|2[0-3]):[0-5]?[0-9]:[0-5]?[0-9]$")]
    pub time: String,
    /// 9 (default) or 8.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 8, maximum = 9)]
    pub first_digit: Option<u32>,
    /// `exact` (default) or `one_decimal`.
    #[param(pattern = "^(exact|one_decimal)$")]
    pub victory_rounding: Option<String>,
}

/// A Short ACW battle worked out in full, as the server would adjudicate it.
#[utoipa::path(get, path = "/v1/tools/combat", tag = "tools", params(CombatQuery),
    responses((status = 200, description = "victory, result, winner (attacker/defender), difference, band, rates, casualties", body = Object),
              (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn combat(ApiQuery(q): ApiQuery<CombatQuery>) -> ApiResult<Json<Value>> {
    const MAX_FACTORS: u32 = 10_000;
    if q.attacker > MAX_FACTORS {
        return Err(AppError::bad_request("query.attacker", "combat.factors", "attacker factors run from 0 to 10000"));
    }
    if q.defender_fortified.is_some_and(|f| f > MAX_FACTORS) {
        return Err(AppError::bad_request(
            "query.defender_fortified",
            "combat.factors",
            "fortified defender factors run from 0 to 10000",
        ));
    }
    if q.defender > MAX_FACTORS {
        return Err(AppError::bad_request("query.defender", "combat.factors", "defender factors run from 0 to 10000"));
    }
    let defence = Defence::parse(&q.defence).ok_or_else(|| {
        AppError::bad_request("query.defence", "combat.defence", "defence is open, woods, river or fortified")
    })?;
    let time = TimeOfDay::parse(&q.time).map_err(|r| AppError::bad_request("query.time", r.rule, r.detail))?;
    let digits = DigitPositions::from_first(q.first_digit.unwrap_or(9)).ok_or_else(|| {
        AppError::bad_request("query.first_digit", "result_number.digit_positions", "first_digit is 9 or 8")
    })?;
    let rounding = match q.victory_rounding.as_deref() {
        None | Some("exact") => VictoryRounding::Exact,
        Some("one_decimal") => VictoryRounding::OneDecimal,
        Some(_) => {
            return Err(AppError::bad_request(
                "query.victory_rounding",
                "victory_number.rounding",
                "victory_rounding is exact or one_decimal",
            ))
        }
    };
    let result = ResultNumber::of(time.post_number(adjutant_rules::ClockFormat::H24), digits);
    let battle = match (q.defender_fortified, defence) {
        (None, _) => short_acw::battle(q.attacker, q.defender, defence, &result, rounding),
        // Every defender fortified: the fortified part is all of them.
        (Some(fortified), Defence::Fortified) => {
            short_acw::battle(q.attacker, q.defender.saturating_add(fortified), defence, &result, rounding)
        }
        (Some(fortified), _) => short_acw::battle_by_unit(
            q.attacker,
            short_acw::Defenders { factors: q.defender.saturating_add(fortified), fortified },
            defence,
            &result,
            rounding,
        ),
    };
    Ok(Json(serde_json::to_value(&battle).map_err(|e| AppError::Internal(e.to_string()))?))
}
