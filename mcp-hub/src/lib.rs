//! Many MCP servers behind one tool namespace, under the host's authority.
//!
//! **Not implemented yet.** This crate will hold the registry of named servers,
//! the merged namespace with its collision policies, routing, allow-lists and
//! restart with back-off (see `ARCHITECTURE.md` and the design brief). It exports
//! nothing today, so nothing here can be mistaken for working code.
#![forbid(unsafe_code)]
