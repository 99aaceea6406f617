//! What the client sends validates against each version's official JSON Schema.

#[path = "support/messages.rs"]
mod messages;
#[path = "support/server_messages.rs"]
mod server_messages;
#[path = "support/spec.rs"]
mod spec;

use std::collections::HashMap;
use std::path::Path;

use mcp_types::ProtocolVersion;
use serde_json::{Value, json};

/// One version's schema document and compiled validators per definition.
struct SchemaSet {
    version: ProtocolVersion,
    doc: Value,
    validators: HashMap<String, jsonschema::Validator>,
}

impl SchemaSet {
    fn load(dir: &Path, version: ProtocolVersion) -> Self {
        SchemaSet {
            version,
            doc: spec::load_schema(dir, version.as_str()),
            validators: HashMap::new(),
        }
    }

    fn defs_key(&self) -> &'static str {
        if self.version.schema_uses_defs() {
            "$defs"
        } else {
            "definitions"
        }
    }

    /// A schema that is definition `def` of the document, with every definition
    /// alongside so local `$ref`s resolve (no remote reference is ever fetched).
    fn wrapper(&self, def: &str) -> Value {
        let key = self.defs_key();
        let defs = self
            .doc
            .get(key)
            .cloned()
            .unwrap_or_else(|| panic!("{}: no {key}", self.version));
        assert!(
            defs.get(def).is_some(),
            "{}: schema has no definition {def}",
            self.version
        );
        let mut wrapper = json!({ "allOf": [ { "$ref": format!("#/{key}/{def}") } ] });
        wrapper[key] = defs;
        if let Some(dialect) = self.doc.get("$schema") {
            wrapper["$schema"] = dialect.clone();
        }
        wrapper
    }

    fn check(&mut self, def: &str, instance: &Value) -> Result<(), String> {
        if !self.validators.contains_key(def) {
            let schema = self.wrapper(def);
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{}: compiling {def}: {e}", self.version));
            self.validators.insert(def.to_owned(), validator);
        }
        let validator = &self.validators[def];
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

#[test]
fn client_messages_validate_against_each_versions_schema() {
    let Some(dir) = spec::spec_dir() else { return };
    let mut failures = Vec::new();
    let mut checked = 0;
    for version in ProtocolVersion::ALL {
        let mut schemas = SchemaSet::load(&dir, version);
        let samples = messages::client_messages(version);
        assert!(samples.len() >= 12, "{version}: too few samples");
        for sample in samples {
            for def in &sample.frame_defs {
                checked += 1;
                if let Err(e) = schemas.check(def, &sample.frame) {
                    failures.push(format!(
                        "{version} {}: frame is not a valid {def}: {e}",
                        sample.label
                    ));
                }
            }
            if let Some((result, defs)) = &sample.result {
                for def in defs {
                    checked += 1;
                    if let Err(e) = schemas.check(def, result) {
                        failures.push(format!(
                            "{version} {}: result is not a valid {def}: {e}",
                            sample.label
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} checks ran");
    assert!(
        failures.is_empty(),
        "{} of {checked} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn server_messages_validate_against_each_versions_schema() {
    let Some(dir) = spec::spec_dir() else { return };
    let mut failures = Vec::new();
    let mut checked = 0;
    for version in ProtocolVersion::ALL {
        let mut schemas = SchemaSet::load(&dir, version);
        for sample in server_messages::server_messages(version) {
            for def in &sample.frame_defs {
                checked += 1;
                if let Err(e) = schemas.check(def, &sample.frame) {
                    failures.push(format!(
                        "{version} {}: frame is not a valid {def}: {e}",
                        sample.label
                    ));
                }
            }
            if let Some((result, defs)) = &sample.result {
                for def in defs {
                    checked += 1;
                    if let Err(e) = schemas.check(def, result) {
                        failures.push(format!(
                            "{version} {}: result is not a valid {def}: {e}",
                            sample.label
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} checks ran");
    assert!(
        failures.is_empty(),
        "{} of {checked} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The validator really rejects: a frame missing a required member fails.
#[test]
fn the_validator_rejects_invalid_messages() {
    let Some(dir) = spec::spec_dir() else { return };
    for version in ProtocolVersion::ALL {
        let mut schemas = SchemaSet::load(&dir, version);
        let bad = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "arguments": {} } });
        assert!(
            schemas.check("CallToolRequest", &bad).is_err(),
            "{version}: tools/call without a name passed"
        );
        let bad = json!({ "jsonrpc": "1.0", "method": "notifications/initialized" });
        assert!(
            schemas.check("JSONRPCNotification", &bad).is_err(),
            "{version}: jsonrpc 1.0 passed"
        );
        let bad = json!({ "role": "assistant", "content": { "type": "text", "text": "hi" } });
        assert!(
            schemas.check("CreateMessageResult", &bad).is_err(),
            "{version}: a sampling result without model passed"
        );
        let bad = json!({ "uri": "not a uri with spaces", "name": "x" });
        assert!(
            schemas.check("Root", &bad).is_err(),
            "{version}: formats are not validated"
        );
    }
}

/// 2026-07-28 requests without the required `_meta` keys are invalid: the builder
/// must add them.
#[test]
fn modern_requests_need_the_reserved_meta_keys() {
    let Some(dir) = spec::spec_dir() else { return };
    let mut schemas = SchemaSet::load(&dir, ProtocolVersion::V2026_07_28);
    let bare = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {} });
    assert!(schemas.check("ListToolsRequest", &bare).is_err());
    let samples = messages::client_messages(ProtocolVersion::V2026_07_28);
    let list = samples
        .iter()
        .find(|s| s.label == "request tools/list")
        .expect("a tools/list sample");
    assert!(
        list.frame["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    );
    assert!(schemas.check("ListToolsRequest", &list.frame).is_ok());
}
