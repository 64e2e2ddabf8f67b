//! Problem answers every operation can give, added to each operation of the OpenAPI document
//! so no handler has to list them: any 4xx (a malformed path or query, a body over the size
//! limit, a wrong media type, too many requests, a missing or refused token) and 503 (the
//! database is unreachable or the request ran out of time). All are `application/problem+json`.

use utoipa::openapi::path::Operation;
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::Modify;

use crate::error::PROBLEM_JSON;

pub struct CommonProblems;

fn problem(description: &str) -> RefOr<Response> {
    let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build();
    RefOr::T(ResponseBuilder::new().description(description).content(PROBLEM_JSON, content).build())
}

fn add_common(operation: &mut Operation) {
    let responses = &mut operation.responses.responses;
    responses.entry("4XX".to_owned()).or_insert_with(|| {
        problem(
            "The request is refused: malformed, too large, too many (429 with Retry-After), not allowed for this token, or carrying a token that is not known (401 on every operation, public reads included)",
        )
    });
    responses
        .entry("503".to_owned())
        .or_insert_with(|| problem("The database is unreachable or the request ran out of time; try again"));
}

impl Modify for CommonProblems {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.options,
                &mut item.head,
                &mut item.patch,
                &mut item.trace,
            ];
            for operation in operations.into_iter().flatten() {
                add_common(operation);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_operation_documents_its_problem_answers() {
        let doc = serde_json::to_value(crate::openapi::description(crate::routes::router().into_openapi())).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        assert!(!paths.is_empty());
        for (path, item) in paths {
            for (method, operation) in item.as_object().unwrap() {
                let responses = &operation["responses"];
                for status in ["4XX", "503"] {
                    let schema = &responses[status]["content"]["application/problem+json"]["schema"]["$ref"];
                    assert_eq!(schema, "#/components/schemas/Problem", "{method} {path} {status}");
                }
            }
        }
    }
}
