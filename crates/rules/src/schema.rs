//! JSON Schemas of post bodies and action inputs, for the API documentation.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

/// The JSON Schema (2020-12) of `T` with every sub-schema inlined, so it can be embedded in an
/// OpenAPI 3.1 document as it is (no `$defs` to resolve).
pub fn inline_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Vec<Inner>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    #[test]
    fn sub_schemas_are_inlined() {
        let schema = inline_schema::<Outer>();
        let text = schema.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!text.contains("$schema"), "{text}");
        assert_eq!(schema["properties"]["inner"]["items"]["properties"]["n"]["type"], "integer");
    }
}
