//! Loading hand-written documents (in `tests/fixtures`, JSON and YAML) at
//! the edges: references, styles, media types, bounds, versions, names,
//! selection, 3.0 against 3.1 schemas. Nothing here touches the network.

use std::path::PathBuf;

use mcp_openapi::{
    CredentialRef, DocumentConfig, Limits, Matcher, OpenApiConfig, OpenApiError, OpenApiService,
    Selection, SpecSource, is_valid_tool_name,
};
use mcp_types::{ErrorCause, Tool};
use serde_json::{Value, json};

const BASE: &str = "https://api.example.com";

fn fixture(name: &str) -> SpecSource {
    SpecSource::File(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

async fn load(doc: DocumentConfig) -> Result<OpenApiService, OpenApiError> {
    OpenApiService::load(OpenApiConfig::new(vec![doc])).await
}

async fn load_fixture(name: &str) -> Result<OpenApiService, OpenApiError> {
    load(DocumentConfig::new(fixture(name), BASE)).await
}

fn inline(text: impl Into<String>) -> DocumentConfig {
    DocumentConfig::new(SpecSource::Inline(text.into()), BASE)
}

fn names(service: &OpenApiService) -> Vec<&str> {
    service.tools().iter().map(|t| t.name.as_str()).collect()
}

fn input(tool: &Tool) -> Value {
    tool.input_schema.to_value().unwrap()
}

#[tokio::test]
async fn a_schema_cycle_without_a_value_is_refused() {
    let e = load_fixture("cycle.json").await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::RefCycle { .. }),
        "{e}"
    );
    assert!(e.to_string().starts_with(&format!(
        "{}",
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cycle.json")
            .display()
    )));
    assert_eq!(e.cause(), ErrorCause::Configuration);
}

#[tokio::test]
async fn a_parameter_reference_cycle_is_refused() {
    let e = load_fixture("param_cycle.yaml").await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::RefCycle { .. }),
        "{e}"
    );
}

#[tokio::test]
async fn a_recursive_data_type_is_kept_as_defs() {
    let service = load_fixture("recursive.yaml").await.unwrap();
    let tool = service.tool("plantTree").unwrap();
    let schema = input(tool);
    assert_eq!(
        schema["properties"]["children"]["items"]["$ref"],
        "#/$defs/Node"
    );
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert!(
        validator.is_valid(&json!({"label": "a", "children": [{"label": "b", "children": []}]}))
    );
    assert!(!validator.is_valid(&json!({"label": "a", "children": [{"children": []}]})));
    let output = tool.output_schema.as_ref().unwrap().to_value().unwrap();
    assert_eq!(output["type"], "object");
    assert!(output["$defs"]["Node"].is_object());
}

#[tokio::test]
async fn a_remote_reference_is_refused_by_name_and_never_fetched() {
    let e = load_fixture("remote_ref.yaml").await.unwrap_err();
    match e.innermost() {
        OpenApiError::RemoteRef { reference, at } => {
            assert_eq!(
                reference,
                "https://schemas.elsewhere.example/thing.json#/Thing"
            );
            assert!(at.contains("/paths/~1things/get/responses/200"), "{at}");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn an_unsupported_style_is_refused_at_load_unless_excluded() {
    let e = load_fixture("unsupported_style.json").await.unwrap_err();
    match e.innermost() {
        OpenApiError::UnsupportedStyle {
            operation,
            parameter,
            location,
            style,
            ..
        } => {
            assert_eq!(operation, "GET /things");
            assert_eq!(parameter, "ids");
            assert_eq!(*location, "query");
            assert_eq!(style, "matrix");
        }
        other => panic!("{other}"),
    }
    // Excluding the operation loads the rest.
    let service = load(
        DocumentConfig::new(fixture("unsupported_style.json"), BASE)
            .select(Selection::all().exclude(Matcher::tag("odd"))),
    )
    .await
    .unwrap();
    assert_eq!(names(&service), ["getOther"]);
}

#[tokio::test]
async fn multipart_bodies_are_refused_at_load() {
    let e = load_fixture("multipart.yaml").await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::UnsupportedMediaType { media_type, .. } if media_type == "multipart/form-data"),
        "{e}"
    );
}

#[tokio::test]
async fn oversized_documents_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    let filler = "x".repeat(4096);
    std::fs::write(
        &path,
        format!(r#"{{"openapi": "3.0.3", "info": {{"title": "{filler}", "version": "1"}}, "paths": {{}}}}"#),
    )
    .unwrap();
    let mut limits = Limits::default();
    limits.max_document_bytes = 1024;
    let config =
        OpenApiConfig::new(vec![DocumentConfig::new(SpecSource::File(path), BASE)]).limits(limits);
    let e = OpenApiService::load(config).await.unwrap_err();
    assert!(
        matches!(
            e.innermost(),
            OpenApiError::DocumentTooLarge { limit: 1024 }
        ),
        "{e}"
    );
    assert_eq!(e.cause(), ErrorCause::Bound);
    // The default bound: 16 MiB.
    let text = format!(
        r#"{{"openapi": "3.0.3", "info": {{"title": "{}", "version": "1"}}, "paths": {{}}}}"#,
        "x".repeat(16 * 1024 * 1024)
    );
    let e = load(inline(text)).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::DocumentTooLarge { limit } if *limit == 16 * 1024 * 1024),
        "{e}"
    );
}

/// A chain of `n` schemas, each the next one's only property.
fn chain(n: usize) -> String {
    let mut schemas = serde_json::Map::new();
    for i in 0..n {
        let mut s = json!({"type": "object"});
        if i + 1 < n {
            s["properties"] = json!({"next": {"$ref": format!("#/components/schemas/S{}", i + 1)}});
        }
        schemas.insert(format!("S{i}"), s);
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "chain", "version": "1"},
        "paths": {"/x": {"post": {
            "operationId": "x",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}},
            "responses": {"204": {"description": "ok"}}
        }}},
        "components": {"schemas": schemas}
    })
    .to_string()
}

#[tokio::test]
async fn reference_depth_and_count_are_bounded() {
    assert!(load(inline(chain(60))).await.is_ok());
    let e = load(inline(chain(70))).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::RefTooDeep { limit: 64, .. }),
        "{e}"
    );
    assert_eq!(e.cause(), ErrorCause::Bound);
    let mut limits = Limits::default();
    limits.max_refs = 10;
    let config = OpenApiConfig::new(vec![inline(chain(30))]).limits(limits);
    let e = OpenApiService::load(config).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::TooManyRefs { limit: 10 }),
        "{e}"
    );
}

#[tokio::test]
async fn operations_per_document_are_bounded() {
    let mut limits = Limits::default();
    limits.max_operations = 2;
    let config =
        OpenApiConfig::new(vec![DocumentConfig::new(fixture("names.json"), BASE)]).limits(limits);
    let e = OpenApiService::load(config).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::TooManyOperations { limit: 2 }),
        "{e}"
    );
}

#[tokio::test]
async fn versions_other_than_3_0_and_3_1_are_refused() {
    let e = load_fixture("swagger2.json").await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::UnsupportedVersion { version } if version.contains("2.0")),
        "{e}"
    );
    let e = load(inline(
        "openapi: 3.2.0\ninfo: {title: t, version: '1'}\npaths: {}\n",
    ))
    .await
    .unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::UnsupportedVersion { .. }),
        "{e}"
    );
    let e = load(inline("title: not openapi\n")).await.unwrap_err();
    assert!(matches!(e.innermost(), OpenApiError::NotOpenApi), "{e}");
    let e = load(inline("{\"openapi\": \"3.0.0\",")).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::Parse { format: "JSON", .. }),
        "{e}"
    );
}

#[tokio::test]
async fn yaml_alias_bombs_are_refused_by_the_budget() {
    let mut yaml = String::from(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\nx-a: &a [x, x, x, x, x, x, x, x, x, x]\n",
    );
    let mut prev = "a".to_owned();
    for i in 0..12 {
        let name = format!("b{i}");
        yaml.push_str(&format!(
            "x-{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
        ));
        prev = name;
    }
    let e = load(inline(yaml)).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::Parse { format: "YAML", .. }),
        "{e}"
    );
}

#[tokio::test]
async fn names_collide_deterministically_and_long_ids_are_cut_with_a_hash() {
    let service = load_fixture("names.json").await.unwrap();
    let all = names(&service);
    assert_eq!(all.len(), 7);
    for name in &all {
        assert!(is_valid_tool_name(name), "{name}");
    }
    let mut unique = all.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), all.len());
    // `things_list` needed no change and keeps its name; the two that
    // sanitise onto it get hash suffixes.
    assert!(service.tool("things_list").is_some());
    let suffixed: Vec<&&str> = all
        .iter()
        .filter(|n| n.starts_with("things_list_"))
        .collect();
    assert_eq!(suffixed.len(), 2, "{all:?}");
    // Ids over 64 characters with `/`: 55 characters and a hash.
    let long: Vec<&&str> = all
        .iter()
        .filter(|n| n.starts_with("enterprise-admin_list"))
        .collect();
    assert_eq!(long.len(), 2);
    for name in long {
        assert_eq!(name.len(), 64, "{name}");
    }
    // No operationId: method and path. `get_users_id` is also an exact id
    // (the DELETE's), which keeps the plain name.
    assert_eq!(
        service
            .tool("get_users_id")
            .unwrap()
            .meta
            .as_ref()
            .unwrap()
            .0[mcp_openapi::OPERATION_META_KEY]["method"],
        "DELETE"
    );
    assert!(all.iter().any(|n| n.starts_with("get_users_id_")));
    // The same document loads to the same names.
    let again = load_fixture("names.json").await.unwrap();
    assert_eq!(names(&again), all);
}

#[tokio::test]
async fn openapi_30_and_31_schemas_become_the_same_2020_12_schema() {
    let v30 = load_fixture("schemas30.yaml").await.unwrap();
    let v31 = load_fixture("schemas31.json").await.unwrap();
    let s30 = input(v30.tool("createItem").unwrap());
    let s31 = input(v31.tool("createItem").unwrap());
    for schema in [&s30, &s31] {
        jsonschema::draft202012::meta::validate(schema).unwrap();
        let v = jsonschema::draft202012::new(schema).unwrap();
        assert!(v.is_valid(&json!({"count": 5, "note": null, "kind": null, "owner": null})));
        assert!(
            v.is_valid(&json!({"count": 9, "note": "x", "kind": "a", "owner": {"login": "o"}}))
        );
        assert!(!v.is_valid(&json!({"count": 0})), "exclusive minimum");
        assert!(!v.is_valid(&json!({"count": 10})), "exclusive maximum");
        assert!(!v.is_valid(&json!({"count": 5, "kind": "c"})));
        assert!(!v.is_valid(&json!({"count": 5, "owner": {"login": 1}})));
        assert!(!v.is_valid(&json!({"note": "no count"})));
    }
    assert_eq!(s30["properties"]["count"]["exclusiveMinimum"], 0);
    assert_eq!(s30["properties"]["note"]["type"], json!(["string", "null"]));
    assert_eq!(s30["properties"]["note"]["examples"], json!(["hello"]));
    assert_eq!(s30["properties"]["kind"]["enum"], json!(["a", "b", null]));
    assert!(s30["properties"]["count"].get("minimum").is_none());
    // OpenAPI-only annotations are gone from the bundled definition.
    let out30 = v30
        .tool("createItem")
        .unwrap()
        .output_schema
        .as_ref()
        .unwrap()
        .to_value()
        .unwrap();
    assert!(out30.get("discriminator").is_none());
    assert!(out30.get("x-internal").is_none());
    let out31 = v31
        .tool("createItem")
        .unwrap()
        .output_schema
        .as_ref()
        .unwrap()
        .to_value()
        .unwrap();
    assert_eq!(out30, out31);
}

#[tokio::test]
async fn selection_by_id_tag_and_path() {
    let petstore = include_str!("fixtures/petstore.yaml");
    let pick = |select: Selection| async move {
        let service = load(inline(petstore).select(select)).await.unwrap();
        names(&service)
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pick(Selection::all().include(Matcher::operation_id("getPet"))).await,
        ["getPet"]
    );
    assert_eq!(
        pick(Selection::all().include(Matcher::path("/pets/**").unwrap())).await,
        ["getPet", "getPhoto"]
    );
    assert_eq!(
        pick(
            Selection::all()
                .include("GET /pets".parse().unwrap())
                .include("id:createPet".parse().unwrap())
        )
        .await,
        ["listPets", "createPet"]
    );
    let everything = pick(Selection::all()).await;
    let without_files = pick(Selection::all().exclude(Matcher::path("/files/*").unwrap())).await;
    assert_eq!(everything.len(), without_files.len() + 2);
    let e = load(inline(petstore).select(Selection::all().include(Matcher::tag("nope"))))
        .await
        .unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::NothingSelected),
        "{e}"
    );
}

#[tokio::test]
async fn configuration_is_checked_before_anything_is_read() {
    let bad_base = DocumentConfig::new(fixture("names.json"), "http://api.example.com");
    let e = load(bad_base).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::InsecureUrl { .. }),
        "{e}"
    );
    let with_user = DocumentConfig::new(fixture("names.json"), "https://u:p@api.example.com");
    let e = load(with_user).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::InvalidUrl { .. }),
        "{e}"
    );
    assert!(!e.to_string().contains("u:p"));
    let plain_http_spec = DocumentConfig::new(
        SpecSource::Url("http://specs.example.com/openapi.json".into()),
        BASE,
    );
    let e = load(plain_http_spec).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::InsecureUrl { .. }),
        "{e}"
    );
    let bad_prefix = DocumentConfig::new(fixture("names.json"), BASE).prefix("a/b");
    let e = load(bad_prefix).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::InvalidPrefix { .. }),
        "{e}"
    );
    let e = OpenApiService::load(OpenApiConfig::new(vec![]))
        .await
        .unwrap_err();
    assert!(matches!(e, OpenApiError::NoDocuments));
}

#[tokio::test]
async fn credentials_must_name_declared_schemes_of_the_right_shape() {
    let petstore = include_str!("fixtures/petstore.yaml");
    let e = load(inline(petstore).credential(CredentialRef::env("nope", "X")))
        .await
        .unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::UnknownSecurityScheme { .. }),
        "{e}"
    );
    let e = load(inline(petstore).credential(CredentialRef::env("basic", "X")))
        .await
        .unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::InvalidCredential { .. }),
        "{e}"
    );
    let e = load(inline(petstore).credential(CredentialRef::env("bearer", "")))
        .await
        .unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::InvalidCredential { .. }),
        "{e}"
    );
    let digest = r#"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": {"operationId": "x", "responses": {"200": {"description": "ok"}}}}},
        "components": {"securitySchemes": {"d": {"type": "http", "scheme": "digest"}}}}"#;
    let e = load(inline(digest).credential(CredentialRef::env("d", "X")))
        .await
        .unwrap_err();
    assert!(
        matches!(
            e.innermost(),
            OpenApiError::UnsupportedSecurityScheme { .. }
        ),
        "{e}"
    );
    // Unreferenced, the digest scheme is no obstacle.
    assert!(load(inline(digest)).await.is_ok());
}

#[tokio::test]
async fn fused_documents_keep_names_unique_under_prefixes() {
    let names_doc = || DocumentConfig::new(fixture("names.json"), BASE);
    let config = OpenApiConfig::new(vec![names_doc().prefix("a_"), names_doc().prefix("b_")]);
    let service = OpenApiService::load(config).await.unwrap();
    assert_eq!(service.tools().len(), 14);
    assert!(service.tool("a_things_list").is_some());
    assert!(service.tool("b_things_list").is_some());
    for tool in service.tools() {
        assert!(is_valid_tool_name(&tool.name), "{}", tool.name);
    }
    // The same operations twice without prefixes cannot be told apart.
    let config = OpenApiConfig::new(vec![names_doc(), names_doc()]);
    let e = OpenApiService::load(config).await.unwrap_err();
    assert!(matches!(e, OpenApiError::NameCollision { .. }), "{e}");
}

#[tokio::test]
async fn the_petstore_tools_say_what_they_take() {
    let petstore = include_str!("fixtures/petstore.yaml");
    let service = load(inline(petstore).credential(CredentialRef::env("api_key", "PETS_KEY")))
        .await
        .unwrap();
    let get_pet = service.tool("getPet").unwrap();
    assert_eq!(get_pet.title.as_deref(), Some("One pet"));
    assert_eq!(
        get_pet.description.as_deref(),
        Some("One pet\n\nReturns one pet by id.")
    );
    assert_eq!(
        get_pet.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    let schema = input(get_pet);
    let props = schema["properties"].as_object().unwrap();
    let keys: Vec<&str> = props.keys().map(String::as_str).collect();
    // The API key's header is the credential's; Accept is ignored.
    assert_eq!(keys, ["X-Trace", "fields", "petId", "theme"]);
    assert_eq!(schema["required"], json!(["petId"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(props["petId"]["description"], "The pet's id.");
    let output = get_pet.output_schema.as_ref().unwrap().to_value().unwrap();
    assert_eq!(
        output["properties"]["tag"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(output["properties"]["age"]["exclusiveMinimum"], 0);

    // The body's `name` meets the query's `name`: the body's becomes
    // `name_body`; the read-only `id` is not an argument.
    let create = service.tool("createPet").unwrap();
    assert!(create.annotations.is_none());
    let schema = input(create);
    let keys: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["age", "name", "name_body", "tag"]);
    assert_eq!(schema["required"], json!(["name_body"]));
    assert!(schema.get("additionalProperties").is_none());

    // No operationId: method and path.
    let notes = service.tool("post_notes").unwrap();
    assert_eq!(input(notes)["properties"]["body"]["type"], "string");
    let put_file = service.tool("putFile").unwrap();
    assert_eq!(
        input(put_file)["properties"]["body"]["contentEncoding"],
        "base64"
    );
    // A path parameter not in the path is no argument.
    assert!(
        input(service.tool("getGrid").unwrap())["properties"]
            .get("zoom")
            .is_none()
    );
    // Several success responses, or one that is not an object: no outputSchema.
    assert!(service.tool("listPets").unwrap().output_schema.is_none());
}

#[tokio::test]
async fn local_references_follow_json_pointer_escapes() {
    let doc = json!({
        "openapi": "3.1.0",
        "info": {"title": "pointers", "version": "1"},
        "paths": {
            "/a/{x}": {"get": {
                "operationId": "a",
                "parameters": [{"name": "x", "in": "path", "required": true,
                                "schema": {"type": "string", "maxLength": 3}}],
                "responses": {"200": {"description": "ok"}}
            }},
            "/b/{x}": {"get": {
                "operationId": "b",
                "parameters": [{"$ref": "#/paths/~1a~1%7Bx%7D/get/parameters/0"}],
                "responses": {"200": {"description": "ok"}}
            }},
            "/c": {"get": {
                "operationId": "c",
                "parameters": [{"name": "n", "in": "query",
                                "schema": {"$ref": "#/components/schemas/t~0i~1lde"}}],
                "responses": {"200": {"description": "ok"}}
            }}
        },
        "components": {"schemas": {"t~i/lde": {"type": "integer"}}}
    });
    let service = load(inline(doc.to_string())).await.unwrap();
    let b = input(service.tool("b").unwrap());
    assert_eq!(b["properties"]["x"]["maxLength"], 3);
    let c = input(service.tool("c").unwrap());
    let reference = c["properties"]["n"]["$ref"].as_str().unwrap();
    assert!(reference.starts_with("#/$defs/@"), "{reference}");
    let validator = jsonschema::draft202012::new(&c).unwrap();
    assert!(validator.is_valid(&json!({"n": 3})));
    assert!(!validator.is_valid(&json!({"n": "three"})));
    let missing = doc.to_string().replace("t~0i~1lde\"}", "nothing\"}");
    let e = load(inline(missing)).await.unwrap_err();
    assert!(
        matches!(e.innermost(), OpenApiError::RefNotFound { .. }),
        "{e}"
    );
}

/// A path whose own text has a `.` or `..` segment would climb out of the
/// base URL's path (a URL parser resolves it): refused at load, naming
/// where. Dots inside a segment are just text.
#[tokio::test]
async fn a_path_with_a_dot_segment_is_refused_at_load() {
    let doc = |path: &str| {
        json!({
            "openapi": "3.1.0",
            "info": {"title": "t", "version": "1"},
            "paths": {path: {"get": {
                "operationId": "op",
                "responses": {"200": {"description": "ok"}}
            }}}
        })
        .to_string()
    };
    for path in ["/../admin", "/a/./b", "/a/%2E%2e/b", "/x/{id}/.."] {
        let e = load(inline(doc(path))).await.unwrap_err();
        match e.innermost() {
            OpenApiError::InvalidDocument { at, problem } => {
                let pointer = format!("/paths/{}/get", path.replace('/', "~1"));
                assert_eq!(at, &pointer, "{path}");
                assert!(problem.contains("`..` segment"), "{path}: {problem}");
            }
            other => panic!("{path}: {other}"),
        }
    }
    for path in ["/a.b/...", "/v1/.well-known", "/v1/..x"] {
        let service = load(inline(doc(path))).await.unwrap();
        assert_eq!(names(&service), ["op"], "{path}");
    }
}
