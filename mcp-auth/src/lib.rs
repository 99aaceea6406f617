//! OAuth 2.1 for MCP servers and static header credentials.
//!
//! **Not implemented yet.** This crate will hold protected-resource and
//! authorization-server discovery, client registration, the authorization-code
//! flow with PKCE, refresh, and the token store. It exports nothing today, so
//! nothing here can be mistaken for working code.
#![forbid(unsafe_code)]
