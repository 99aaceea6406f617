//! Tool schema checks (the `validation` feature): a compiled schema is the
//! plain checker when the schema is plain, else a full `jsonschema`
//! validator. Without the feature, `no_validation.rs` takes this module's
//! place with the same three items and compiles nothing.

use mcp_types::JsonSchemaDoc;
use mcp_types::text::Untrusted;
use serde_json::Value;

use crate::plain_schema::PlainSchema;

/// A compiled schema: the plain checker when the schema is plain, else the
/// full validator.
#[derive(Debug)]
pub(crate) enum Check {
    Plain(PlainSchema),
    Full(jsonschema::Validator),
}

/// Compiles `schema`; `None` when there is none or it cannot be used (a
/// warning says so: the check is then skipped for that tool).
pub(crate) fn compile(schema: Option<&JsonSchemaDoc>) -> Option<Box<Check>> {
    let schema = schema?;
    // Most schemas are plain, and are read straight from their text.
    if let Some(plain) = PlainSchema::from_json(schema.as_str()) {
        return Some(Box::new(Check::Plain(plain)));
    }
    let schema = schema.to_value().ok()?;
    match jsonschema::validator_for(&schema) {
        Ok(v) => Some(Box::new(Check::Full(v))),
        Err(e) => {
            // The message can quote the server's schema (a `$ref`, a pattern).
            let error = e.masked().to_string();
            tracing::warn!(error = %Untrusted::new(&error), "tool schema not usable for validation; check skipped");
            None
        }
    }
}

/// What is wrong with `instance`, one line per failing path (at most 20).
pub(crate) fn failures(check: &Check, instance: &Value) -> Vec<String> {
    let validator = match check {
        Check::Plain(plain) => return plain.failures(instance),
        Check::Full(validator) => validator,
    };
    validator
        .iter_errors(instance)
        .take(20)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("{path}: {}", e.masked())
        })
        .collect()
}
