//! The conformance client: what a host would do with a server, driven by the
//! suite's environment (`MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT`,
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`), through the public library API only.
//!
//! It negotiates the era the suite asks for, lists the tools and calls each
//! (arguments from the scenario context, else made up from the tool's input
//! schema), reads the resources and gets the prompts the server offers, and
//! answers elicitation (accepting with the form's defaults) and sampling.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context;
use mcp_auth::{
    ClientAuth, EnterpriseIdp, Grant, HeadlessRedirectFlow, KeySource, MachineClient, OAuthConfig,
    OAuthProvider, PreRegisteredClient, Secret, SecretSource, SigningKey,
};
use mcp_session::{
    ClientHandlers, Elicitation, ElicitationHandler, HandlerError, Negotiation, Roots,
    SamplingHandler, Session, SessionConfig,
};
use mcp_transport::{BoxFuture, HttpConfig, HttpConnector};
use mcp_types::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitResult, Root, SamplingContent,
};
use serde_json::{Map, Value, json};

pub(crate) async fn run(url: &str) -> anyhow::Result<()> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let mode = if version == "2026-07-28" {
        Negotiation::Modern
    } else if version.is_empty() {
        Negotiation::Auto
    } else {
        Negotiation::Legacy
    };
    tracing::info!(%scenario, %version, "conformance client");

    // Every scenario runs with OAuth available, as a host would: a server
    // that never answers 401 never sees it.
    let oauth = Arc::new(oauth_provider(url, &scenario, &context)?);
    let connector = Arc::new(HttpConnector::new(
        HttpConfig::new(url).credentials(oauth.clone()),
    ));
    let config = SessionConfig {
        handlers: ClientHandlers::new()
            .sampling(CannedModel)
            .elicitation(AcceptDefaults)
            .roots(Roots::new(vec![Root::new("file:///tmp")])),
        // The suite's tool calls are sent as the scenario gives them (some
        // carry `null`s on purpose); a host checking them first would refuse.
        validate_arguments: false,
        ..SessionConfig::default()
    };
    let session = Session::connect(connector, config)
        .await
        .context("connecting")?;
    let session = match session.negotiate(mode).await {
        Ok(session) => session,
        Err(e) => {
            report_auth_failure(&oauth);
            anyhow::bail!("negotiation failed: {e}");
        }
    };

    let caps = session.server_capabilities().clone();
    // Tools are listed even when not declared: a host tries, and a server
    // without them answers with an error that is only logged.
    match session.list_tools().await {
        Err(e) => tracing::warn!(error = %e, "listing tools failed"),
        Ok(catalog) => {
            for tool in catalog.tools() {
                let arguments = arguments_for(&context, &tool.name)
                    .or_else(|| schema_echo(&scenario, &catalog, tool))
                    .unwrap_or_else(|| {
                        mcp_testkit::example_arguments(
                            &tool.input_schema.to_value().unwrap_or(Value::Null),
                            "test",
                        )
                    });
                let result = session.call_tool(&tool.name, arguments).await;
                if let Err(e) = result {
                    tracing::warn!(tool = ?tool.name, error = %e, "tool call failed");
                }
            }
        }
    }
    if caps.resources.is_some()
        && let Ok(listing) = session.list_resources().await
    {
        for resource in listing.items {
            let _ = session.read_resource(&resource.uri).await;
        }
    }
    if caps.prompts.is_some()
        && let Ok(listing) = session.list_prompts().await
    {
        for prompt in listing.items {
            let args: BTreeMap<String, String> = prompt
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true))
                .map(|a| (a.name.clone(), "test".to_owned()))
                .collect();
            let _ = session.get_prompt(&prompt.name, args).await;
        }
    }
    skills(&session, &scenario).await;
    session.close().await;
    report_auth_failure(&oauth);
    Ok(())
}

/// Skills are listed (which reads no file); a skill is loaded only when a
/// host would, here when the scenario stands for the model asking for one
/// (`sep-2640-client-verify-*`). A skill that fails verification is dropped
/// whole: none of its supporting files is read.
async fn skills(session: &Session<mcp_session::Ready>, scenario: &str) {
    if !session.offers_skills() {
        return;
    }
    let listing = match session.list_skills().await {
        Ok(listing) => listing,
        Err(e) => {
            tracing::warn!(error = %e, "listing skills failed");
            return;
        }
    };
    if !scenario.starts_with("sep-2640-client-verify") {
        return;
    }
    for entry in &listing.items {
        match session.load_skill(entry).await {
            Err(e) => tracing::warn!(error = %e, "skill refused"),
            Ok(loaded) => {
                if let mcp_types::SkillFiles::Listed(files) = &loaded.entry.resources {
                    for file in files.iter().filter(|f| f.uri != entry.uri) {
                        if let Err(e) = session.read_skill_file(&loaded.entry, &file.uri).await {
                            tracing::warn!(error = %e, "skill file refused");
                        }
                    }
                }
            }
        }
    }
}

/// The suite's Client ID Metadata Document URL (its mock authorization
/// servers accept it without fetching it).
const CONFORMANCE_CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth as the conformance scenarios need it: the authorization redirect
/// followed without a browser, a Client ID Metadata Document URL, the
/// pre-registered client the context may carry (`client_id`,
/// `client_secret`, `issuer`), and the machine grant of the extension
/// scenarios, configured from their context as a host's configuration would
/// (the grant is chosen by the scenario, the secrets come from the context).
fn oauth_provider(url: &str, scenario: &str, context: &Value) -> anyhow::Result<OAuthProvider> {
    let mut config = OAuthConfig::new(url)
        .client_name("mcp-conformance-client")
        .client_metadata_url(CONFORMANCE_CLIENT_METADATA_URL);
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    let secret = |key: &str| text(key).map(|v| SecretSource::Value(Secret::new(v)));
    let client_id = text("client_id").unwrap_or_default();
    let grant = match scenario {
        "auth/client-credentials-basic" => secret("client_secret").map(|s| {
            Grant::ClientCredentials(MachineClient::new(client_id, ClientAuth::SecretBasic(s)))
        }),
        "auth/client-credentials-jwt" => match text("private_key_pem") {
            Some(pem) => {
                let key = SigningKey::from_pem(pem.as_bytes()).context("the context's key")?;
                Some(Grant::ClientCredentials(MachineClient::new(
                    client_id,
                    ClientAuth::PrivateKeyJwt(KeySource::Key(Arc::new(key))),
                )))
            }
            None => None,
        },
        "auth/wif-jwt-bearer" => secret("valid_jwt").map(|assertion| Grant::JwtBearer {
            client: MachineClient::new(client_id, ClientAuth::None),
            assertion,
        }),
        "auth/enterprise-managed-authorization" => {
            match (
                secret("client_secret"),
                secret("idp_id_token"),
                text("idp_issuer"),
            ) {
                (Some(client_secret), Some(id_token), Some(idp_issuer)) => {
                    let idp_client = MachineClient::new(
                        text("idp_client_id").unwrap_or_default(),
                        ClientAuth::None,
                    );
                    let mut idp = EnterpriseIdp::new(idp_issuer, idp_client, id_token);
                    if let Some(endpoint) = text("idp_token_endpoint") {
                        idp = idp.token_endpoint(endpoint);
                    }
                    Some(Grant::Enterprise {
                        client: MachineClient::new(
                            client_id,
                            ClientAuth::SecretBasic(client_secret),
                        ),
                        idp,
                    })
                }
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(grant) = grant {
        config = config.grant(grant);
    } else if let (Some(issuer), Some(client_id)) = (text("issuer"), text("client_id")) {
        let mut client = PreRegisteredClient::new(issuer, client_id);
        if let Some(secret) = text("client_secret") {
            client = client.secret(Secret::new(secret));
        }
        config = config.pre_registered(client);
    }
    let handler = HeadlessRedirectFlow::new("http://127.0.0.1:33418/callback")
        .context("setting up the authorization handler")?;
    OAuthProvider::new(config, Arc::new(handler)).context("setting up OAuth")
}

/// The two authorization failures no request reports (a refresh that failed
/// before a request, a token-store write): say them on stderr. Failed
/// renewals reach stderr through the transport's warning.
fn report_auth_failure(oauth: &OAuthProvider) {
    if let Some(e) = oauth.take_last_error() {
        eprintln!("authorization failed: {e}");
    }
}

/// Arguments the scenario's context gives for `tool` (`toolCalls`).
fn arguments_for(context: &Value, tool: &str) -> Option<Map<String, Value>> {
    context
        .get("toolCalls")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(tool))?
        .get("arguments")?
        .as_object()
        .cloned()
}

/// The `json-schema-2020-12-preservation` scenario asks the client to hand the
/// schema it kept for another tool back through an echo tool: the schema
/// comes from the public catalogue, exactly as the library kept it.
fn schema_echo(
    scenario: &str,
    catalog: &mcp_session::ToolCatalog,
    tool: &mcp_types::Tool,
) -> Option<Map<String, Value>> {
    if scenario != "json-schema-2020-12-preservation" || tool.name == "json_schema_2020_12_tool" {
        return None;
    }
    let focal = catalog.get("json_schema_2020_12_tool")?;
    let mut args = Map::new();
    args.insert("schema".to_owned(), focal.input_schema.to_value().ok()?);
    Some(args)
}

/// Sampling answered with a fixed text (no model here).
struct CannedModel;

impl SamplingHandler for CannedModel {
    fn create_message(
        &self,
        _params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async {
            let content: SamplingContent =
                serde_json::from_value(json!({"type": "text", "text": "ok"}))
                    .map_err(|_| HandlerError::internal("could not build the answer"))?;
            Ok(CreateMessageResult::new(content, "conformance-client"))
        })
    }
}

/// Elicitation accepted with the form's defaults (a user pressing OK).
struct AcceptDefaults;

impl ElicitationHandler for AcceptDefaults {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            if matches!(request, Elicitation::Form(_)) {
                result.content = Some(request.form_defaults());
            }
            Ok(result)
        })
    }

    fn supports_url(&self) -> bool {
        true
    }
}
