//! Tool schema checks without the `validation` feature: nothing is
//! compiled, so no argument and no structured result is checked, whatever
//! `SessionConfig::validate_arguments` and
//! `SessionConfig::validate_structured_content` say. The first time a check
//! would have run, a `tracing` debug event says that it was skipped and why.

use std::sync::Once;

use mcp_types::JsonSchemaDoc;
use serde_json::Value;

/// A compiled schema: none exists in this build.
#[derive(Debug)]
pub(crate) enum Check {}

/// Compiles nothing: every check is skipped (said once per process).
pub(crate) fn compile(_schema: Option<&JsonSchemaDoc>) -> Option<Box<Check>> {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        tracing::debug!(
            "mcp-session was built without its `validation` feature: tool arguments and structured content are not checked against their schemas"
        );
    });
    None
}

/// Never called: no [`Check`] exists.
pub(crate) fn failures(check: &Check, _instance: &Value) -> Vec<String> {
    match *check {}
}
