//! Every 2026-07-28 example payload deserialises into our type for its folder and
//! re-serialises to an equivalent JSON value.

#[path = "support/spec.rs"]
mod spec;

use std::fmt::Debug;

use mcp_types::requests::{
    CallTool, Complete, Discover, GetPrompt, ListPrompts, ListResourceTemplates, ListResources,
    ListTools, ReadResource, SubscriptionsListen,
};
use mcp_types::{notifications, *};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `json` as `T`, re-encodes it and compares the two as values.
fn roundtrip<T: DeserializeOwned + Serialize + Debug>(json: &str) -> Result<T, String> {
    let original: Value =
        serde_json::from_str(json).map_err(|e| format!("example is not JSON: {e}"))?;
    let typed: T = serde_json::from_str(json)
        .map_err(|e| format!("does not decode as {}: {e}", std::any::type_name::<T>()))?;
    let again = serde_json::to_value(&typed).map_err(|e| format!("does not encode: {e}"))?;
    if again != original {
        return Err(format!(
            "re-serialised value differs\n  original: {original}\n  again:    {again}"
        ));
    }
    Ok(typed)
}

/// Like [`roundtrip`], then checks the decoded value with `pred`.
fn roundtrip_where<T: DeserializeOwned + Serialize + Debug>(
    json: &str,
    what: &str,
    pred: impl Fn(&T) -> bool,
) -> Result<(), String> {
    let typed = roundtrip::<T>(json)?;
    if pred(&typed) {
        Ok(())
    } else {
        Err(format!("decoded as {typed:?}, expected {what}"))
    }
}

fn request<R: Request>(json: &str) -> Result<(), String>
where
    R::Params: Debug,
{
    roundtrip_where::<JsonRpcRequest<R::Params>>(json, R::METHOD, |r| r.method == R::METHOD)
}

fn notification<N: Notification>(json: &str) -> Result<(), String>
where
    N::Params: Debug,
{
    roundtrip_where::<JsonRpcNotification<N::Params>>(json, N::METHOD, |n| n.method == N::METHOD)
}

fn response<R: Request>(json: &str) -> Result<(), String>
where
    R::Result: Debug,
{
    roundtrip::<JsonRpcResponse<R::Result>>(json).map(drop)
}

fn error_response(json: &str, code: i64) -> Result<(), String> {
    roundtrip_where::<JsonRpcErrorResponse>(json, "the error code", |e| e.error.code == code)
}

fn error_object(json: &str, code: i64) -> Result<(), String> {
    roundtrip_where::<ErrorObject>(json, "the error code", |e| e.code == code)
}

fn input_request(json: &str, method: &str) -> Result<(), String> {
    roundtrip_where::<InputRequest>(json, method, |r| {
        r.request.method() == method && !matches!(r.request, ServerRequestMessage::Unknown { .. })
    })
}

fn content(json: &str, kind: &str) -> Result<(), String> {
    roundtrip_where::<ContentBlock>(json, kind, |b| {
        b.kind() == kind && !matches!(b, ContentBlock::Unknown(_))
    })
}

fn field_schema(
    json: &str,
    what: &str,
    pred: impl Fn(&PrimitiveSchema) -> bool,
) -> Result<(), String> {
    roundtrip_where::<PrimitiveSchema>(json, what, pred)
}

/// The one map from example folder to our type. An unmapped folder is an error,
/// so new examples are noticed.
fn check(folder: &str, json: &str) -> Result<(), String> {
    use error_codes::*;
    match folder {
        "AudioContent" => roundtrip::<AudioContent>(json)
            .map(drop)
            .and_then(|()| content(json, "audio")),
        "BlobResourceContents" => {
            roundtrip::<BlobResourceContents>(json)
                .map(drop)
                .and_then(|()| {
                    roundtrip_where::<ResourceContents>(json, "blob", |c| {
                        matches!(c, ResourceContents::Blob(_))
                    })
                })
        }
        "BooleanSchema" => roundtrip::<BooleanSchema>(json).map(drop).and_then(|()| {
            field_schema(json, "boolean", |s| {
                matches!(s, PrimitiveSchema::Boolean(_))
            })
        }),
        "CallToolRequest" => request::<CallTool>(json),
        "CallToolRequestParams" => roundtrip::<CallToolParams>(json).map(drop),
        "CallToolResult" => roundtrip::<CallToolResult>(json).map(drop).and_then(|()| {
            roundtrip_where::<RequestOutcome<CallToolResult>>(json, "complete", |o| {
                matches!(o, RequestOutcome::Complete(_))
            })
        }),
        "CallToolResultResponse" => response::<CallTool>(json),
        "CancelledNotification" => notification::<notifications::Cancelled>(json),
        "CancelledNotificationParams" => roundtrip::<CancelledParams>(json).map(drop),
        "ClientCapabilities" => roundtrip::<ClientCapabilities>(json).map(drop),
        "CompleteRequest" => request::<Complete>(json),
        "CompleteRequestParams" => roundtrip::<CompleteParams>(json).map(drop),
        "CompleteResult" => roundtrip::<CompleteResult>(json).map(drop),
        "CompleteResultResponse" => response::<Complete>(json),
        "CreateMessageRequest" => input_request(json, "sampling/createMessage"),
        "CreateMessageRequestParams" => roundtrip::<CreateMessageParams>(json).map(drop),
        "CreateMessageResult" => roundtrip::<CreateMessageResult>(json).map(drop),
        "DiscoverRequest" => request::<Discover>(json),
        "DiscoverResult" => roundtrip::<DiscoverResult>(json).map(drop),
        "DiscoverResultResponse" => response::<Discover>(json),
        "ElicitRequest" => input_request(json, "elicitation/create"),
        "ElicitRequestFormParams" => roundtrip::<ElicitFormParams>(json)
            .map(drop)
            .and_then(|()| {
                roundtrip_where::<ElicitParams>(json, "form", |p| {
                    matches!(p, ElicitParams::Form(_))
                })
            }),
        "ElicitRequestURLParams" => roundtrip::<ElicitUrlParams>(json).map(drop).and_then(|()| {
            roundtrip_where::<ElicitParams>(json, "url", |p| matches!(p, ElicitParams::Url(_)))
        }),
        "ElicitResult" => roundtrip::<ElicitResult>(json).map(drop),
        "EmbeddedResource" => roundtrip::<EmbeddedResource>(json)
            .map(drop)
            .and_then(|()| content(json, "resource")),
        "GetPromptRequest" => request::<GetPrompt>(json),
        "GetPromptRequestParams" => roundtrip::<GetPromptParams>(json).map(drop),
        "GetPromptResult" => roundtrip::<GetPromptResult>(json).map(drop),
        "GetPromptResultResponse" => response::<GetPrompt>(json),
        "HeaderMismatchError" => error_response(json, HEADER_MISMATCH),
        "ImageContent" => roundtrip::<ImageContent>(json)
            .map(drop)
            .and_then(|()| content(json, "image")),
        "InputRequests" => roundtrip_where::<InputRequests>(json, "known requests", |m| {
            m.values()
                .all(|r| !matches!(r.request, ServerRequestMessage::Unknown { .. }))
        }),
        "InputRequiredResult" => roundtrip::<InputRequiredResult>(json)
            .map(drop)
            .and_then(|()| {
                roundtrip_where::<RequestOutcome<CallToolResult>>(json, "input_required", |o| {
                    matches!(o, RequestOutcome::InputRequired(_))
                })
            }),
        "InputResponses" => roundtrip_where::<InputResponses>(json, "known responses", |m| {
            m.values().all(|r| !matches!(r, InputResponse::Unknown(_)))
        }),
        "InternalError" => error_object(json, INTERNAL_ERROR),
        "InvalidParamsError" => error_object(json, INVALID_PARAMS),
        "ListPromptsRequest" => request::<ListPrompts>(json),
        "ListPromptsResult" => roundtrip::<ListPromptsResult>(json).map(drop),
        "ListPromptsResultResponse" => response::<ListPrompts>(json),
        "ListResourceTemplatesRequest" => request::<ListResourceTemplates>(json),
        "ListResourceTemplatesResult" => roundtrip::<ListResourceTemplatesResult>(json).map(drop),
        "ListResourceTemplatesResultResponse" => response::<ListResourceTemplates>(json),
        "ListResourcesRequest" => request::<ListResources>(json),
        "ListResourcesResult" => roundtrip::<ListResourcesResult>(json).map(drop),
        "ListResourcesResultResponse" => response::<ListResources>(json),
        // The example carries an `id` beside `method`: kept in `extra`.
        "ListRootsRequest" => input_request(json, "roots/list"),
        "ListRootsResult" => roundtrip::<ListRootsResult>(json).map(drop),
        "ListToolsRequest" => request::<ListTools>(json),
        "ListToolsResult" => roundtrip::<ListToolsResult>(json).map(drop),
        "ListToolsResultResponse" => response::<ListTools>(json),
        "LoggingMessageNotification" => notification::<notifications::LoggingMessage>(json),
        "LoggingMessageNotificationParams" => roundtrip::<LoggingMessageParams>(json).map(drop),
        "MethodNotFoundError" => error_object(json, METHOD_NOT_FOUND),
        "MissingRequiredClientCapabilityError" => {
            roundtrip_where::<JsonRpcErrorResponse>(json, "typed data", |e| {
                e.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
                    && matches!(
                        e.error.data_as::<MissingRequiredClientCapabilityData>(),
                        Ok(Some(_))
                    )
            })
        }
        "ModelPreferences" => roundtrip::<ModelPreferences>(json).map(drop),
        "NumberSchema" => roundtrip::<NumberSchema>(json).map(drop).and_then(|()| {
            field_schema(json, "number", |s| matches!(s, PrimitiveSchema::Number(_)))
        }),
        "PaginatedRequestParams" => roundtrip::<PaginatedParams>(json).map(drop),
        "ParseError" => error_object(json, PARSE_ERROR),
        "ProgressNotification" => notification::<notifications::Progress>(json),
        "ProgressNotificationParams" => roundtrip::<ProgressParams>(json).map(drop),
        "PromptListChangedNotification" => notification::<notifications::PromptListChanged>(json),
        "ReadResourceRequest" => request::<ReadResource>(json),
        "ReadResourceResult" => roundtrip::<ReadResourceResult>(json).map(drop),
        "ReadResourceResultResponse" => response::<ReadResource>(json),
        "Resource" => roundtrip::<Resource>(json).map(drop),
        "ResourceLink" => roundtrip::<ResourceLink>(json)
            .map(drop)
            .and_then(|()| content(json, "resource_link")),
        "ResourceListChangedNotification" => {
            notification::<notifications::ResourceListChanged>(json)
        }
        "ResourceUpdatedNotification" => notification::<notifications::ResourceUpdated>(json),
        "ResourceUpdatedNotificationParams" => roundtrip::<ResourceUpdatedParams>(json).map(drop),
        "Root" => roundtrip::<Root>(json).map(drop),
        "SamplingMessage" => roundtrip::<SamplingMessage>(json).map(drop),
        "ServerCapabilities" => roundtrip::<ServerCapabilities>(json).map(drop),
        "StringSchema" => roundtrip::<StringSchema>(json).map(drop).and_then(|()| {
            field_schema(json, "string", |s| matches!(s, PrimitiveSchema::String(_)))
        }),
        "SubscriptionsAcknowledgedNotification" => {
            notification::<notifications::SubscriptionsAcknowledged>(json)
        }
        "SubscriptionsListenRequest" => request::<SubscriptionsListen>(json),
        "SubscriptionsListenResult" => roundtrip::<SubscriptionsListenResult>(json).map(drop),
        "SubscriptionsListenResultResponse" => response::<SubscriptionsListen>(json),
        "TextContent" => roundtrip::<TextContent>(json)
            .map(drop)
            .and_then(|()| content(json, "text")),
        "TextResourceContents" => {
            roundtrip::<TextResourceContents>(json)
                .map(drop)
                .and_then(|()| {
                    roundtrip_where::<ResourceContents>(json, "text", |c| {
                        matches!(c, ResourceContents::Text(_))
                    })
                })
        }
        "TitledMultiSelectEnumSchema" => roundtrip::<TitledMultiSelectEnumSchema>(json)
            .map(drop)
            .and_then(|()| {
                field_schema(json, "titled multi-select", |s| {
                    matches!(s, PrimitiveSchema::TitledMultiSelect(_))
                })
            }),
        "TitledSingleSelectEnumSchema" => roundtrip::<TitledSingleSelectEnumSchema>(json)
            .map(drop)
            .and_then(|()| {
                field_schema(json, "titled single-select", |s| {
                    matches!(s, PrimitiveSchema::TitledSingleSelect(_))
                })
            }),
        "Tool" => roundtrip::<Tool>(json).map(drop),
        "ToolListChangedNotification" => notification::<notifications::ToolListChanged>(json),
        "ToolResultContent" => roundtrip::<ToolResultContent>(json)
            .map(drop)
            .and_then(|()| content(json, "tool_result")),
        "ToolUseContent" => roundtrip::<ToolUseContent>(json)
            .map(drop)
            .and_then(|()| content(json, "tool_use")),
        "UnsupportedProtocolVersionError" => {
            roundtrip_where::<JsonRpcErrorResponse>(json, "typed data", |e| {
                e.error.code == UNSUPPORTED_PROTOCOL_VERSION
                    && matches!(
                        e.error.data_as::<UnsupportedProtocolVersionData>(),
                        Ok(Some(_))
                    )
            })
        }
        "UntitledMultiSelectEnumSchema" => roundtrip::<UntitledMultiSelectEnumSchema>(json)
            .map(drop)
            .and_then(|()| {
                field_schema(json, "untitled multi-select", |s| {
                    matches!(s, PrimitiveSchema::UntitledMultiSelect(_))
                })
            }),
        "UntitledSingleSelectEnumSchema" => roundtrip::<UntitledSingleSelectEnumSchema>(json)
            .map(drop)
            .and_then(|()| {
                field_schema(json, "untitled single-select", |s| {
                    matches!(s, PrimitiveSchema::UntitledSingleSelect(_))
                })
            }),
        other => Err(format!(
            "no type mapped for example folder {other:?}: add it to check()"
        )),
    }
}

#[test]
fn every_2026_example_round_trips() {
    let Some(dir) = spec::spec_dir() else { return };
    let examples = dir.join("2026-07-28").join("examples");
    let mut folders: Vec<_> = std::fs::read_dir(&examples)
        .unwrap_or_else(|e| panic!("reading {}: {e}", examples.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for folder in &folders {
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 folder name")
            .to_owned();
        let mut files: Vec<_> = std::fs::read_dir(folder)
            .expect("readable example folder")
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let json = std::fs::read_to_string(&file).expect("readable example");
            checked += 1;
            if let Err(why) = check(&name, &json) {
                failures.push(format!(
                    "{}: {why}",
                    file.strip_prefix(&examples).unwrap_or(&file).display()
                ));
            }
        }
    }
    assert!(
        checked > 100,
        "expected the 2026-07-28 examples, found {checked} files"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} examples failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
