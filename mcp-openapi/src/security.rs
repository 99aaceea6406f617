//! Credentials: the document's security schemes joined with the
//! configuration's references, and the secrets read at each call.
//!
//! A secret lives only in the request being built: it is read from its
//! variable when a call is made, put in a header marked sensitive (or the
//! query or a cookie of that request), and never kept, logged or shown.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde_json::Value;

use crate::config::{CredentialRef, Environment, SecretRef};
use crate::document::{Document, child};
use crate::error::OpenApiError;
use crate::style::Location;

/// Where a scheme puts its secret.
#[derive(Debug)]
enum Placement {
    Header(HeaderName),
    Query(String),
    Cookie(String),
    Bearer,
    Basic,
}

/// One configured credential.
pub(crate) struct Credential {
    placement: Placement,
    secret: SecretRef,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Variable names only; the secret is never held.
        f.debug_struct("Credential")
            .field("placement", &self.placement)
            .field("secret", &self.secret)
            .finish()
    }
}

/// The document's configured schemes.
#[derive(Debug, Default)]
pub(crate) struct SchemeTable {
    by_name: HashMap<String, Arc<Credential>>,
    always: Vec<Arc<Credential>>,
    /// The parameters configured API keys fill (location, name): left out of
    /// the tool's arguments.
    key_params: Vec<(Location, String)>,
}

impl SchemeTable {
    /// Joins the configuration's references with the document's schemes.
    pub(crate) fn new(doc: &Document, refs: &[CredentialRef]) -> Result<Self, OpenApiError> {
        let mut table = SchemeTable::default();
        for r in refs {
            match r {
                CredentialRef::BearerForAll { env } => {
                    check_var("(every request)", env)?;
                    table.always.push(Arc::new(Credential {
                        placement: Placement::Bearer,
                        secret: SecretRef::Env(env.clone()),
                    }));
                }
                CredentialRef::Scheme { scheme, secret } => {
                    match secret {
                        SecretRef::Env(v) => check_var(scheme, v)?,
                        SecretRef::Basic {
                            user_env,
                            password_env,
                        } => {
                            check_var(scheme, user_env)?;
                            check_var(scheme, password_env)?;
                        }
                    }
                    if table.by_name.contains_key(scheme) {
                        return Err(OpenApiError::InvalidCredential {
                            scheme: scheme.clone(),
                            problem: "it is given twice",
                        });
                    }
                    let credential = table.scheme(doc, scheme, secret)?;
                    table.by_name.insert(scheme.clone(), Arc::new(credential));
                }
            }
        }
        Ok(table)
    }

    fn scheme(
        &mut self,
        doc: &Document,
        name: &str,
        secret: &SecretRef,
    ) -> Result<Credential, OpenApiError> {
        let at = child("/components/securitySchemes", name);
        let Some(raw) = doc.at(&at) else {
            return Err(OpenApiError::UnknownSecurityScheme {
                scheme: name.to_owned(),
            });
        };
        let (scheme, at) = doc.resolve(raw, &at)?;
        let text = |key: &str| scheme.get(key).and_then(Value::as_str);
        let kind = text("type").unwrap_or("");
        let unsupported = |kind: String| OpenApiError::UnsupportedSecurityScheme {
            scheme: name.to_owned(),
            kind,
        };
        let placement = match kind {
            "apiKey" => {
                let key_name = text("name")
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| OpenApiError::invalid(&at, "an apiKey scheme has no name"))?;
                let place = text("in").and_then(Location::parse);
                match place {
                    Some(Location::Header) => {
                        let header = HeaderName::from_bytes(key_name.as_bytes()).map_err(|_| {
                            OpenApiError::invalid(
                                &at,
                                "an apiKey header name is not a valid header name",
                            )
                        })?;
                        self.key_params
                            .push((Location::Header, key_name.to_owned()));
                        Placement::Header(header)
                    }
                    Some(Location::Query) => {
                        self.key_params.push((Location::Query, key_name.to_owned()));
                        Placement::Query(key_name.to_owned())
                    }
                    Some(Location::Cookie) => {
                        self.key_params
                            .push((Location::Cookie, key_name.to_owned()));
                        Placement::Cookie(key_name.to_owned())
                    }
                    _ => {
                        return Err(OpenApiError::invalid(
                            &at,
                            "an apiKey scheme is not in header, query or cookie",
                        ));
                    }
                }
            }
            "http" => {
                let http = text("scheme").unwrap_or("").to_ascii_lowercase();
                match http.as_str() {
                    "bearer" => Placement::Bearer,
                    "basic" => Placement::Basic,
                    other => return Err(unsupported(format!("http {other}"))),
                }
            }
            // An OAuth-secured API takes a token obtained elsewhere.
            "oauth2" | "openIdConnect" => Placement::Bearer,
            other => return Err(unsupported(other.to_owned())),
        };
        match (&placement, secret) {
            (Placement::Basic, SecretRef::Basic { .. }) => {}
            (Placement::Basic, _) => {
                return Err(OpenApiError::InvalidCredential {
                    scheme: name.to_owned(),
                    problem: "an http basic scheme takes a user and a password variable",
                });
            }
            (_, SecretRef::Basic { .. }) => {
                return Err(OpenApiError::InvalidCredential {
                    scheme: name.to_owned(),
                    problem: "this scheme takes one variable, not a user and a password",
                });
            }
            _ => {}
        }
        Ok(Credential {
            placement,
            secret: secret.clone(),
        })
    }

    /// Whether a parameter is filled by a configured API key.
    pub(crate) fn fills(&self, location: Location, name: &str) -> bool {
        self.key_params.iter().any(|(l, n)| {
            *l == location
                && if location == Location::Header {
                    n.eq_ignore_ascii_case(name)
                } else {
                    n == name
                }
        })
    }

    /// The credentials of an operation whose requirements are
    /// `requirements` (its own `security`, else the document's).
    pub(crate) fn plan(&self, requirements: Option<&Value>) -> Security {
        let mut alternatives = Vec::new();
        if let Some(Value::Array(reqs)) = requirements {
            for req in reqs {
                let Some(req) = req.as_object() else { continue };
                if req.is_empty() {
                    continue;
                }
                let usable: Option<Vec<Arc<Credential>>> =
                    req.keys().map(|k| self.by_name.get(k).cloned()).collect();
                if let Some(usable) = usable {
                    alternatives.push(usable);
                }
            }
        }
        Security {
            alternatives,
            always: self.always.clone(),
        }
    }
}

fn check_var(scheme: &str, var: &str) -> Result<(), OpenApiError> {
    if var.is_empty() || var.contains('=') || var.contains('\0') {
        return Err(OpenApiError::InvalidCredential {
            scheme: scheme.to_owned(),
            problem: "a variable name is empty or holds `=` or NUL",
        });
    }
    Ok(())
}

/// The credentials one operation sends: every one of `always`, and the
/// first alternative whose variables are all set.
#[derive(Debug, Default)]
pub(crate) struct Security {
    alternatives: Vec<Vec<Arc<Credential>>>,
    always: Vec<Arc<Credential>>,
}

/// What the credentials add to one request.
#[derive(Default)]
pub(crate) struct Applied {
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) query: Vec<String>,
    pub(crate) cookies: Vec<String>,
}

/// Why the credentials could not be applied: a variable unset or unusable
/// (its name only).
#[derive(Debug)]
pub(crate) enum CredentialProblem {
    Unset(String),
    Unusable(String),
}

fn read(env: &Environment, var: &str) -> Result<String, CredentialProblem> {
    env.get(var).map_err(|unusable| {
        if unusable {
            CredentialProblem::Unusable(var.to_owned())
        } else {
            CredentialProblem::Unset(var.to_owned())
        }
    })
}

fn sensitive(text: &str, var: &str) -> Result<HeaderValue, CredentialProblem> {
    let mut value =
        HeaderValue::from_str(text).map_err(|_| CredentialProblem::Unusable(var.to_owned()))?;
    value.set_sensitive(true);
    Ok(value)
}

impl Credential {
    fn apply(&self, env: &Environment, out: &mut Applied) -> Result<(), CredentialProblem> {
        match (&self.placement, &self.secret) {
            (
                Placement::Basic,
                SecretRef::Basic {
                    user_env,
                    password_env,
                },
            ) => {
                let user = read(env, user_env)?;
                let password = read(env, password_env)?;
                let token =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                out.headers.push((
                    AUTHORIZATION,
                    sensitive(&format!("Basic {token}"), user_env)?,
                ));
            }
            (placement, SecretRef::Env(var)) => {
                let secret = read(env, var)?;
                match placement {
                    Placement::Bearer => out
                        .headers
                        .push((AUTHORIZATION, sensitive(&format!("Bearer {secret}"), var)?)),
                    Placement::Header(name) => {
                        out.headers.push((name.clone(), sensitive(&secret, var)?));
                    }
                    Placement::Query(name) => out.query.push(format!(
                        "{}={}",
                        crate::style::encode_component(name),
                        crate::style::encode_component(&secret)
                    )),
                    Placement::Cookie(name) => {
                        // Checked like a header value: it ends up in one.
                        sensitive(&secret, var)?;
                        out.cookies.push(format!(
                            "{}={}",
                            crate::style::encode_component(name),
                            crate::style::encode_component(&secret)
                        ));
                    }
                    Placement::Basic => return Err(CredentialProblem::Unusable(var.clone())),
                }
            }
            (_, SecretRef::Basic { user_env, .. }) => {
                return Err(CredentialProblem::Unusable(user_env.clone()));
            }
        }
        Ok(())
    }
}

impl Security {
    /// Reads the variables and says what to add to the request.
    pub(crate) fn apply(&self, env: &Environment) -> Result<Applied, CredentialProblem> {
        let mut out = Applied::default();
        for credential in &self.always {
            credential.apply(env, &mut out)?;
        }
        if self.alternatives.is_empty() {
            return Ok(out);
        }
        let mut first_problem = None;
        for alternative in &self.alternatives {
            let mut attempt = Applied::default();
            match alternative
                .iter()
                .try_for_each(|c| c.apply(env, &mut attempt))
            {
                Ok(()) => {
                    out.headers.extend(attempt.headers);
                    out.query.extend(attempt.query);
                    out.cookies.extend(attempt.cookies);
                    return Ok(out);
                }
                Err(problem) => {
                    first_problem.get_or_insert(problem);
                }
            }
        }
        Err(first_problem.unwrap_or(CredentialProblem::Unset(String::new())))
    }
}
