//! Extractors that answer every rejection in Adjutant's problem+json format.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{StatusCode, Uri};
use serde::de::DeserializeOwned;

use crate::error::AppError;
use crate::AppState;

/// A JSON body, parsed with the path of the offending field on failure. The body is read up to
/// the server's `body_limit_bytes`, or its route's own [`BodyLimit`]: past it, 413.
pub struct ApiJson<T>(pub T);

/// The most bytes a route reads of a body, where that is not the server's `body_limit_bytes` (a
/// scenario's upload): put on the route as a layer, `axum::Extension(BodyLimit(…))`.
///
/// Only a route that reads a body pays for its limit. axum's `DefaultBodyLimit` layer, around
/// every route, put its value into every request's extensions, a calculator's read among them:
/// one more boxed value, and one more step in the map's growing.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
            });
        if !is_json {
            return Err(AppError::Client {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                field: Some("Content-Type".into()),
                rule: "request.json".into(),
                detail: "send the body as application/json".into(),
            });
        }
        let limit = req.extensions().get::<BodyLimit>().map_or(state.config.body_limit_bytes, |limit| limit.0);
        let bytes = http_body_util::BodyExt::collect(http_body_util::Limited::new(req.into_body(), limit))
            .await
            .map_err(body_refusal)?
            .to_bytes();
        parse_json(&bytes).map(ApiJson)
    }
}

/// Parses JSON text, naming the field at fault.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AppError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|inner| {
        // Not JSON at all: the body as a whole is at fault; the detail gives line and column.
        AppError::bad_request("body", "request.json_syntax", format!("the body is not valid JSON: {inner}"))
    })?;
    // serde would also read a struct from a JSON array (`["Halleck"]`); Adjutant takes objects only.
    if !value.is_object() {
        return Err(AppError::unprocessable("body", "request.json_schema", "the body is a JSON object"));
    }
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." { "body".to_owned() } else { format!("body.{path}") };
        AppError::unprocessable(field, "request.json_schema", err.into_inner().to_string())
    })
}

/// For a field holding a nested object: refuses the array form serde would also accept for a
/// struct, and keeps the path of a field at fault inside the object (`settings.result_time`).
pub fn optional_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    use serde::de::value::MapAccessDeserializer;
    use serde::de::{MapAccess, Visitor};
    use std::marker::PhantomData;

    struct Object<T>(PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D2: serde::Deserializer<'de>>(self, deserializer: D2) -> Result<Self::Value, D2::Error> {
            deserializer.deserialize_map(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map)).map(Some)
        }
    }
    deserializer.deserialize_option(Object(PhantomData))
}

/// A body not read to its end: past its limit (413), or cut off on its way (400).
fn body_refusal(error: Box<dyn std::error::Error + Send + Sync>) -> AppError {
    if error.is::<http_body_util::LengthLimitError>() {
        AppError::Client {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            field: Some("body".into()),
            rule: "request.body_limit".into(),
            detail: "the request body is larger than the server accepts".into(),
        }
    } else {
        AppError::Client {
            status: StatusCode::BAD_REQUEST,
            field: Some("body".into()),
            rule: "request.body".into(),
            detail: format!("Failed to buffer the request body: {error}"),
        }
    }
}

/// Path parameters.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(path_rejection(rejection)),
        }
    }
}

fn path_rejection(rejection: PathRejection) -> AppError {
    let detail = rejection.body_text();
    let field = match &rejection {
        PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
            axum::extract::path::ErrorKind::ParseErrorAtKey { key, .. }
            | axum::extract::path::ErrorKind::DeserializeError { key, .. }
            | axum::extract::path::ErrorKind::InvalidUtf8InPathParam { key } => {
                format!("path.{key}")
            }
            _ => "path".to_owned(),
        },
        _ => "path".to_owned(),
    };
    // A path that does not name anything we have is "not found", whatever its shape.
    AppError::Client { status: StatusCode::NOT_FOUND, field: Some(field), rule: "request.path".into(), detail }
}

/// Query parameters.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        query_of(&parts.uri).map(ApiQuery)
    }
}

/// The query of `uri` read into `T`, or the refusal that names the parameter at fault: what
/// [`ApiQuery`] extracts, for a handler that looks at the query's text first.
pub fn query_of<T: DeserializeOwned>(uri: &Uri) -> Result<T, AppError> {
    // The same deserializer axum's `Query` runs, without tracking the path of each value: a
    // query that parses is taken at once, and only one that does not is parsed again through
    // axum's, for the message that names the parameter.
    if let Ok(query) = serde_urlencoded::from_str(uri.query().unwrap_or_default()) {
        return Ok(query);
    }
    axum::extract::Query::<T>::try_from_uri(uri).map(|q| q.0).map_err(query_rejection)
}

fn query_rejection(rejection: QueryRejection) -> AppError {
    let detail = rejection.body_text();
    AppError::bad_request(query_field(&detail), "request.query", detail)
}

/// The parameter serde_urlencoded's message names: "after: UUID parsing failed: … `n` …" names
/// `after` before its first colon; "missing field `time`" and "unknown field `x`, expected …"
/// name it first between backticks.
fn query_field(detail: &str) -> String {
    let message = detail.strip_prefix("Failed to deserialize query string: ").unwrap_or(detail);
    let name = |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let field = match message.split_once(": ") {
        Some((before, _)) if name(before) => Some(before),
        _ => message.split('`').nth(1).filter(|n| name(n)),
    };
    field.map_or_else(|| "query".to_owned(), |f| format!("query.{f}"))
}

#[cfg(test)]
mod tests {
    use super::query_field;

    #[test]
    fn the_field_named_in_a_query_message() {
        let prefix = "Failed to deserialize query string: ";
        for (message, field) in [
            ("moderator: UUID parsing failed: invalid character: found `n` at 0", "query.moderator"),
            ("missing field `time`", "query.time"),
            ("unknown field `tme`, expected one of `time`, `first_digit`", "query.tme"),
            ("limit: invalid digit found in string", "query.limit"),
            ("invalid type: found `x`: expected", "query.x"),
            ("something else went wrong", "query"),
        ] {
            assert_eq!(query_field(&format!("{prefix}{message}")), field, "{message}");
        }
    }
}
