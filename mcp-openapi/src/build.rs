//! One document's operations → tool descriptions and call plans.

use std::collections::HashSet;

use serde_json::{Map, Value, json};
use url::Url;

use crate::config::{DocumentConfig, Limits, OperationRef};
use crate::document::{self, Document, METHODS, child};
use crate::error::OpenApiError;
use crate::plan::{BodyPlan, CallPlan, Media, ParamPlan, PathPart};
use crate::schema::{Converted, Edge, SchemaSet, is_object_schema, meta_check};
use crate::security::SchemeTable;
use crate::style::{self, Location};

/// One operation, ready to become a tool.
#[derive(Debug)]
pub(crate) struct Operation {
    pub(crate) method: &'static str,
    pub(crate) path: String,
    pub(crate) operation_id: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    /// JSON text.
    pub(crate) input_schema: String,
    /// JSON text.
    pub(crate) output_schema: Option<String>,
    pub(crate) plan: CallPlan,
}

/// Parses a document and builds its selected operations.
pub(crate) fn build_document(
    bytes: &[u8],
    config: &DocumentConfig,
    base: &Url,
    limits: &Limits,
    check: bool,
) -> Result<Vec<Operation>, OpenApiError> {
    let (root, version) = document::parse(bytes)?;
    let doc = Document::new(root, version, limits);
    let schemes = SchemeTable::new(&doc, &config.credentials)?;
    let mut builder = Builder {
        doc: &doc,
        schemas: SchemaSet::new(&doc),
        schemes,
        base,
        check,
    };
    let operations = builder.operations(config, limits)?;
    builder.schemas.check_cycles()?;
    if check {
        builder.schemas.check_defs()?;
    }
    if operations.is_empty() {
        return Err(OpenApiError::NothingSelected);
    }
    Ok(operations)
}

struct Builder<'d> {
    doc: &'d Document,
    schemas: SchemaSet<'d>,
    schemes: SchemeTable,
    base: &'d Url,
    check: bool,
}

/// A resolved parameter.
struct Param<'a> {
    value: &'a Value,
    at: String,
    name: &'a str,
    location: Location,
}

/// Header parameters the OpenAPI specification says to ignore, and those
/// the HTTP client writes itself: a caller's `Host` would send the request,
/// credentials included, to another site behind the same address (a CDN's),
/// and the framing and hop-by-hop headers are not the caller's to set.
const IGNORED_HEADERS: [&str; 13] = [
    "accept",
    "content-type",
    "authorization",
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "proxy-authorization",
];

/// Keywords a request body schema may have and still be spread into the
/// tool's arguments.
const FLAT_KEYWORDS: [&str; 9] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "description",
    "title",
    "examples",
    "deprecated",
    "default",
];

impl<'d> Builder<'d> {
    fn operations(
        &mut self,
        config: &DocumentConfig,
        limits: &Limits,
    ) -> Result<Vec<Operation>, OpenApiError> {
        let root = &self.doc.root;
        let mut out = Vec::new();
        let Some(paths) = root.get("paths") else {
            return Ok(out);
        };
        let Some(paths) = paths.as_object() else {
            return Err(OpenApiError::invalid("/paths", "`paths` is not an object"));
        };
        let mut count = 0usize;
        for (path, item) in paths {
            let item_at = child("/paths", path);
            let (item, item_at) = self.doc.resolve(item, &item_at)?;
            let Some(item_map) = item.as_object() else {
                return Err(OpenApiError::invalid(
                    item_at,
                    "a path item is not an object",
                ));
            };
            for method in METHODS {
                let Some(op) = item_map.get(method) else {
                    continue;
                };
                count += 1;
                if count > limits.max_operations {
                    return Err(OpenApiError::TooManyOperations {
                        limit: limits.max_operations,
                    });
                }
                let op_at = child(&item_at, method);
                if !op.is_object() {
                    return Err(OpenApiError::invalid(
                        op_at,
                        "an operation is not an object",
                    ));
                }
                let operation_id = op.get("operationId").and_then(Value::as_str);
                let tags = op
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|t| t.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let selected = config.select.selects(&OperationRef {
                    method,
                    path,
                    operation_id,
                    tags,
                });
                if selected {
                    out.push(self.operation(path, method, op, &op_at, item, &item_at)?);
                }
            }
        }
        Ok(out)
    }

    fn operation(
        &mut self,
        path: &str,
        method: &'static str,
        op: &Value,
        op_at: &str,
        item: &Value,
        item_at: &str,
    ) -> Result<Operation, OpenApiError> {
        let label = format!("{} {path}", method.to_ascii_uppercase());
        let params = self.parameters(op, op_at, item, item_at, &label)?;
        let template = parse_template(path, op_at)?;

        // Claims on argument names, in order: path, query, header, cookie
        // parameters (each in declaration order), then the body.
        let mut keys = Keys::default();
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut edges: Vec<Edge> = Vec::new();
        let mut plans: Vec<ParamPlan> = Vec::new();
        let in_template: HashSet<&str> = template
            .iter()
            .filter_map(|p| match p {
                Part::Param(n) => Some(n.as_str()),
                Part::Literal(_) => None,
            })
            .collect();
        for location in [
            Location::Path,
            Location::Query,
            Location::Header,
            Location::Cookie,
        ] {
            for p in params.iter().filter(|p| p.location == location) {
                if location == Location::Path && !in_template.contains(p.name) {
                    // Declared but not in the path: nothing to fill.
                    continue;
                }
                let (plan, schema) = self.parameter(p, &label)?;
                let key = keys.claim(p.name, location.as_str());
                if plan.required {
                    required.push(Value::String(key.clone()));
                }
                edges.extend(schema.edges);
                properties.insert(key.clone(), schema.value);
                plans.push(ParamPlan { key, ..plan });
            }
        }
        let path_parts = template
            .into_iter()
            .map(|part| match part {
                Part::Literal(text) => Ok(PathPart::Literal(style::path_literal(&text))),
                Part::Param(name) => plans
                    .iter()
                    .position(|p| p.location == Location::Path && p.name == name)
                    .map(PathPart::Param)
                    .ok_or_else(|| {
                        OpenApiError::invalid(
                            op_at,
                            "the path names a parameter the operation does not declare",
                        )
                    }),
            })
            .collect::<Result<Vec<_>, _>>()?;

        let (body, rest) = self.body(
            op,
            op_at,
            &label,
            &mut keys,
            &mut properties,
            &mut required,
            &mut edges,
        )?;

        let mut input = Map::new();
        input.insert("type".into(), Value::String("object".into()));
        input.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            input.insert("required".into(), Value::Array(required));
        }
        if !rest {
            input.insert("additionalProperties".into(), Value::Bool(false));
        }
        let input = Value::Object(input);
        let input_at = format!("{label} inputSchema");
        if self.check {
            meta_check(&input, &input_at)?;
        }
        let input_schema = self.schemas.bundle(&input, &edges, &input_at)?;

        let (output_schema, accept) = self.responses(op, op_at, &label)?;

        let servers = op
            .get("servers")
            .or_else(|| item.get("servers"))
            .or_else(|| self.doc.root.get("servers"));
        let base = effective_base(self.base, servers);
        let requirements = op.get("security").or_else(|| self.doc.root.get("security"));

        let text = |key: &str| {
            op.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let summary = text("summary");
        let mut description = match (summary, text("description")) {
            (Some(s), Some(d)) if !d.starts_with(s) => Some(format!("{s}\n\n{d}")),
            (_, Some(d)) => Some(d.to_owned()),
            (Some(s), None) => Some(s.to_owned()),
            (None, None) => None,
        };
        if op.get("deprecated") == Some(&Value::Bool(true)) {
            description = Some(match description {
                Some(d) => format!("{d}\n\nDeprecated."),
                None => "Deprecated.".to_owned(),
            });
        }

        Ok(Operation {
            method,
            path: path.to_owned(),
            operation_id: op
                .get("operationId")
                .and_then(Value::as_str)
                .map(str::to_owned),
            title: summary.map(str::to_owned),
            description,
            input_schema,
            output_schema,
            plan: CallPlan {
                method: reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                    .unwrap_or(reqwest::Method::GET),
                label,
                origin: base.origin(),
                base: base.as_str().trim_end_matches('/').to_owned(),
                path: path_parts,
                params: plans,
                body,
                accept,
                security: self.schemes.plan(requirements),
            },
        })
    }

    /// The path item's parameters, overridden by the operation's (same name
    /// and location), resolved; header parameters the specification
    /// ignores and API keys the configuration fills are left out.
    fn parameters<'a>(
        &self,
        op: &'a Value,
        op_at: &str,
        item: &'a Value,
        item_at: &str,
        label: &str,
    ) -> Result<Vec<Param<'a>>, OpenApiError>
    where
        'd: 'a,
    {
        let mut out: Vec<Param<'a>> = Vec::new();
        for (holder, holder_at) in [(item, item_at), (op, op_at)] {
            let Some(list) = holder.get("parameters") else {
                continue;
            };
            let list_at = child(holder_at, "parameters");
            let Some(list) = list.as_array() else {
                return Err(OpenApiError::invalid(
                    list_at,
                    "`parameters` is not an array",
                ));
            };
            for (i, raw) in list.iter().enumerate() {
                let (value, at) = self.doc.resolve(raw, &child(&list_at, &i.to_string()))?;
                let name = value
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| OpenApiError::invalid(&at, "a parameter has no name"))?;
                let place = value
                    .get("in")
                    .and_then(Value::as_str)
                    .ok_or_else(|| OpenApiError::invalid(&at, "a parameter has no `in`"))?;
                let Some(location) = Location::parse(place) else {
                    return Err(OpenApiError::UnsupportedLocation {
                        operation: label.to_owned(),
                        parameter: name.to_owned(),
                        location: place.to_owned(),
                    });
                };
                if location == Location::Header
                    && IGNORED_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name))
                {
                    continue;
                }
                if self.schemes.fills(location, name) {
                    continue;
                }
                let param = Param {
                    value,
                    at,
                    name,
                    location,
                };
                match out
                    .iter_mut()
                    .find(|p| p.name == name && p.location == location)
                {
                    Some(existing) => *existing = param,
                    None => out.push(param),
                }
            }
        }
        Ok(out)
    }

    /// A parameter's plan (its key still unset) and its argument's schema.
    fn parameter(
        &self,
        p: &Param<'_>,
        label: &str,
    ) -> Result<(ParamPlan, Converted), OpenApiError> {
        let v = p.value;
        let style_text = v.get("style").and_then(Value::as_str);
        let explode = v.get("explode").and_then(Value::as_bool);
        let (style, explode) = style::choose(p.location, style_text, explode).ok_or_else(|| {
            OpenApiError::UnsupportedStyle {
                operation: label.to_owned(),
                parameter: p.name.to_owned(),
                location: p.location.as_str(),
                style: style_text.unwrap_or("(default)").to_owned(),
                explode: explode.unwrap_or(false),
            }
        })?;
        if p.location == Location::Header
            && reqwest::header::HeaderName::from_bytes(p.name.as_bytes()).is_err()
        {
            return Err(OpenApiError::invalid(
                &p.at,
                "a header parameter's name is not a valid header name",
            ));
        }
        let (schema, json) = if let Some(schema) = v.get("schema") {
            (
                self.schemas.convert(schema, &child(&p.at, "schema"))?,
                false,
            )
        } else if let Some(content) = v.get("content").and_then(Value::as_object) {
            let Some((media, entry)) = content.iter().next() else {
                return Err(OpenApiError::invalid(
                    &p.at,
                    "a parameter's `content` is empty",
                ));
            };
            let at = child(&child(&child(&p.at, "content"), media), "schema");
            let schema = match entry.get("schema") {
                Some(s) => self.schemas.convert(s, &at)?,
                None => Converted {
                    value: json!({}),
                    edges: Vec::new(),
                },
            };
            (schema, is_json(media))
        } else {
            (
                Converted {
                    value: json!({}),
                    edges: Vec::new(),
                },
                false,
            )
        };
        let mut schema = schema;
        if let Some(obj) = schema.value.as_object_mut() {
            if let Some(d) = v.get("description").and_then(Value::as_str)
                && !obj.contains_key("description")
            {
                obj.insert("description".into(), Value::String(d.to_owned()));
            }
            if v.get("deprecated") == Some(&Value::Bool(true)) {
                obj.insert("deprecated".into(), Value::Bool(true));
            }
        }
        let required =
            p.location == Location::Path || v.get("required") == Some(&Value::Bool(true));
        Ok((
            ParamPlan {
                key: String::new(),
                name: p.name.to_owned(),
                location: p.location,
                style,
                explode,
                allow_reserved: v.get("allowReserved") == Some(&Value::Bool(true)),
                json,
                required,
            },
            schema,
        ))
    }

    /// The request body: its plan, and whether arguments beyond those
    /// listed are accepted (they go into the body).
    #[allow(clippy::too_many_arguments)]
    fn body(
        &mut self,
        op: &Value,
        op_at: &str,
        label: &str,
        keys: &mut Keys,
        properties: &mut Map<String, Value>,
        required: &mut Vec<Value>,
        edges: &mut Vec<Edge>,
    ) -> Result<(BodyPlan, bool), OpenApiError> {
        let Some(raw) = op.get("requestBody") else {
            return Ok((BodyPlan::None, false));
        };
        let (rb, rb_at) = self.doc.resolve(raw, &child(op_at, "requestBody"))?;
        let body_required = rb.get("required") == Some(&Value::Bool(true));
        let Some(content) = rb.get("content").and_then(Value::as_object) else {
            return Ok((BodyPlan::None, false));
        };
        if content.is_empty() {
            return Ok((BodyPlan::None, false));
        }
        let pick = |test: fn(&str) -> bool| content.keys().find(|k| test(k));
        let (media, media_type) = if let Some(k) = pick(is_json) {
            (Media::Json, k)
        } else if let Some(k) = pick(|k| base_type(k) == "application/x-www-form-urlencoded") {
            (Media::Form, k)
        } else if let Some(k) = pick(is_text) {
            (Media::Text, k)
        } else if let Some(k) = pick(|k| !base_type(k).starts_with("multipart/")) {
            (Media::Binary, k)
        } else {
            return Err(OpenApiError::UnsupportedMediaType {
                operation: label.to_owned(),
                media_type: content.keys().next().cloned().unwrap_or_default(),
            });
        };
        let content_type = if media_type.contains('*') {
            match media {
                Media::Text => "text/plain".to_owned(),
                _ => "application/octet-stream".to_owned(),
            }
        } else {
            media_type.clone()
        };
        let description = rb.get("description").and_then(Value::as_str);
        let schema_at = child(&child(&child(&rb_at, "content"), media_type), "schema");
        let whole = |keys: &mut Keys, schema: Value| {
            let key = keys.claim("body", "body");
            (key, schema)
        };
        let (key, schema) = match media {
            Media::Json | Media::Form => {
                let converted = match content[media_type].get("schema") {
                    Some(s) => self.schemas.convert(s, &schema_at)?,
                    None => Converted {
                        value: json!({}),
                        edges: Vec::new(),
                    },
                };
                let resolved = self.schemas.resolve_alias(converted.clone(), &schema_at)?;
                if let Some(plan) = flatten(
                    &resolved,
                    media,
                    &content_type,
                    body_required,
                    keys,
                    properties,
                    required,
                ) {
                    edges.extend(resolved.edges);
                    let rest = matches!(&plan, BodyPlan::Fields { rest: true, .. });
                    return Ok((plan, rest));
                }
                edges.extend(converted.edges);
                let mut schema = converted.value;
                if let (Some(d), Some(obj)) = (description, schema.as_object_mut()) {
                    obj.entry("description")
                        .or_insert(Value::String(d.to_owned()));
                }
                whole(keys, schema)
            }
            Media::Text => {
                let mut schema = json!({"type": "string", "contentMediaType": content_type});
                if let Some(d) = description {
                    schema["description"] = Value::String(d.to_owned());
                }
                whole(keys, schema)
            }
            Media::Binary => {
                let mut schema = json!({
                    "type": "string",
                    "contentEncoding": "base64",
                    "contentMediaType": content_type,
                });
                let d = description.unwrap_or("The request body");
                schema["description"] = Value::String(format!("{d} (base64)"));
                whole(keys, schema)
            }
        };
        properties.insert(key.clone(), schema);
        if body_required {
            required.push(Value::String(key.clone()));
        }
        Ok((
            BodyPlan::Whole {
                key,
                media,
                content_type,
                required: body_required,
            },
            false,
        ))
    }

    /// The output schema (the one success response's JSON object schema)
    /// and the `Accept` value (every success response's media types).
    fn responses(
        &mut self,
        op: &Value,
        op_at: &str,
        label: &str,
    ) -> Result<(Option<String>, Option<String>), OpenApiError> {
        let Some(responses) = op.get("responses").and_then(Value::as_object) else {
            return Ok((None, None));
        };
        let responses_at = child(op_at, "responses");
        let mut success = Vec::new();
        for (status, raw) in responses {
            let b = status.as_bytes();
            let is_2xx = b.len() == 3
                && b[0] == b'2'
                && (b[1..].iter().all(u8::is_ascii_digit) || b[1..].eq_ignore_ascii_case(b"xx"));
            if is_2xx {
                let at = child(&responses_at, status);
                success.push(self.doc.resolve(raw, &at)?);
            }
        }
        let mut accept: Vec<&str> = Vec::new();
        for (response, _) in &success {
            if let Some(content) = response.get("content").and_then(Value::as_object) {
                for media in content.keys() {
                    if !accept.contains(&media.as_str()) {
                        accept.push(media);
                    }
                }
            }
        }
        let accept = (!accept.is_empty()).then(|| accept.join(", "));
        let [(response, at)] = success.as_slice() else {
            return Ok((None, accept));
        };
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            return Ok((None, accept));
        };
        let Some((media, entry)) = content.iter().find(|(k, _)| is_json(k)) else {
            return Ok((None, accept));
        };
        let Some(schema) = entry.get("schema") else {
            return Ok((None, accept));
        };
        let schema_at = child(&child(&child(at, "content"), media), "schema");
        let converted = self.schemas.convert(schema, &schema_at)?;
        let resolved = self.schemas.resolve_alias(converted, &schema_at)?;
        if !is_object_schema(&resolved.value) {
            return Ok((None, accept));
        }
        let output_at = format!("{label} outputSchema");
        if self.check {
            meta_check(&resolved.value, &output_at)?;
        }
        let text = self
            .schemas
            .bundle(&resolved.value, &resolved.edges, &output_at)?;
        Ok((Some(text), accept))
    }
}

/// Spreads an object body's properties into the arguments, when its schema
/// is a plain object (properties, required, and `additionalProperties` at
/// most a boolean); `None` leaves it whole.
fn flatten(
    resolved: &Converted,
    media: Media,
    content_type: &str,
    body_required: bool,
    keys: &mut Keys,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) -> Option<BodyPlan> {
    let schema = resolved.value.as_object()?;
    if !is_object_schema(&resolved.value)
        || !schema.keys().all(|k| FLAT_KEYWORDS.contains(&k.as_str()))
    {
        return None;
    }
    let props = schema.get("properties")?.as_object()?;
    let rest = match schema.get("additionalProperties") {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Bool(false)) => false,
        Some(_) => return None,
    };
    let body_required_props: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields = Vec::new();
    for (name, prop) in props {
        // A read-only property is the server's to set.
        if prop.get("readOnly") == Some(&Value::Bool(true)) {
            continue;
        }
        let key = keys.claim(name, "body");
        let is_required = body_required && body_required_props.contains(&name.as_str());
        if is_required {
            required.push(Value::String(key.clone()));
        }
        properties.insert(key.clone(), prop.clone());
        fields.push((key, name.clone(), is_required));
    }
    Some(BodyPlan::Fields {
        media,
        content_type: content_type.to_owned(),
        fields,
        rest,
        required: body_required,
    })
}

/// The argument names taken so far.
#[derive(Default)]
struct Keys(HashSet<String>);

impl Keys {
    /// `name` if free, else `name_<where>`, else `name_<where>_2`, `_3`, …
    fn claim(&mut self, name: &str, place: &str) -> String {
        if self.0.insert(name.to_owned()) {
            return name.to_owned();
        }
        let first = format!("{name}_{place}");
        if self.0.insert(first.clone()) {
            return first;
        }
        let mut n = 2;
        loop {
            let next = format!("{first}_{n}");
            if self.0.insert(next.clone()) {
                return next;
            }
            n += 1;
        }
    }
}

/// A piece of a path template, before encoding.
enum Part {
    Literal(String),
    Param(String),
}

fn parse_template(path: &str, at: &str) -> Result<Vec<Part>, OpenApiError> {
    if path
        .split('/')
        .any(|segment| !segment.contains('{') && style::is_dot_segment(segment))
    {
        return Err(OpenApiError::invalid(
            at,
            "the path has a `.` or `..` segment, which would leave the base URL's path",
        ));
    }
    let mut out = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Part::Literal(rest[..open].to_owned()));
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(OpenApiError::invalid(at, "the path has a `{` without `}`"));
        };
        out.push(Part::Param(after[..close].to_owned()));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Part::Literal(rest.to_owned()));
    }
    Ok(out)
}

/// The media type without parameters, lower case.
pub(crate) fn base_type(media: &str) -> String {
    media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// `application/json`, `…/…+json`.
pub(crate) fn is_json(media: &str) -> bool {
    let t = base_type(media);
    t == "application/json" || t.ends_with("+json") || t == "*/*+json"
}

/// Media types that are text.
pub(crate) fn is_text(media: &str) -> bool {
    let t = base_type(media);
    t.starts_with("text/")
        || t.ends_with("+xml")
        || matches!(
            t.as_str(),
            "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/javascript"
                | "application/graphql"
                | "application/x-ndjson"
        )
}

/// The base URL of an operation: the configured one, or, when that has no
/// path, the path of the first `servers` entry on its origin (or relative,
/// `/v1`). A server elsewhere is never used.
fn effective_base(configured: &Url, servers: Option<&Value>) -> Url {
    if configured.path() != "/" {
        return configured.clone();
    }
    let Some(servers) = servers.and_then(Value::as_array) else {
        return configured.clone();
    };
    for server in servers {
        let Some(raw) = server.get("url").and_then(Value::as_str) else {
            continue;
        };
        let expanded = expand_variables(raw, server.get("variables"));
        let path = if expanded.starts_with('/') {
            Some(expanded.split(['?', '#']).next().unwrap_or("").to_owned())
        } else {
            match Url::parse(&expanded) {
                Ok(url) if url.origin() == configured.origin() => Some(url.path().to_owned()),
                _ => None,
            }
        };
        if let Some(path) = path {
            let mut base = configured.clone();
            base.set_path(&path);
            return base;
        }
    }
    configured.clone()
}

/// A server URL with `{name}` replaced by each variable's default.
fn expand_variables(raw: &str, variables: Option<&Value>) -> String {
    let mut out = raw.to_owned();
    if let Some(vars) = variables.and_then(Value::as_object) {
        for (name, var) in vars {
            if let Some(default) = var.get("default").and_then(Value::as_str) {
                out = out.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_come_from_the_configuration() {
        let configured = Url::parse("https://api.example.com").unwrap();
        let servers = json!([
            {"url": "https://evil.example.net/v9"},
            {"url": "https://{host}/v2", "variables": {"host": {"default": "api.example.com"}}}
        ]);
        assert_eq!(
            effective_base(&configured, Some(&servers)).as_str(),
            "https://api.example.com/v2"
        );
        let elsewhere = json!([{"url": "https://evil.example.net/v9"}]);
        assert_eq!(
            effective_base(&configured, Some(&elsewhere)).as_str(),
            "https://api.example.com/"
        );
        let relative = json!([{"url": "/api"}]);
        assert_eq!(
            effective_base(&configured, Some(&relative)).as_str(),
            "https://api.example.com/api"
        );
        let with_path = Url::parse("https://api.example.com/v1").unwrap();
        assert_eq!(
            effective_base(&with_path, Some(&relative)).as_str(),
            "https://api.example.com/v1"
        );
    }

    #[test]
    fn keys_are_claimed_in_order() {
        let mut keys = Keys::default();
        assert_eq!(keys.claim("id", "path"), "id");
        assert_eq!(keys.claim("id", "header"), "id_header");
        assert_eq!(keys.claim("id_header", "query"), "id_header_query");
        assert_eq!(keys.claim("id", "header"), "id_header_2");
    }

    #[test]
    fn templates() {
        let parts = parse_template("/a/{b}.{c}x", "/p").unwrap();
        assert_eq!(parts.len(), 5);
        assert!(parse_template("/a/{b", "/p").is_err());
        assert!(is_json("application/vnd.github+json; charset=utf-8"));
        assert!(is_text("text/x-markdown"));
        assert!(!is_text("application/octet-stream"));
    }
}
