//! One MCP connection: a sans-IO protocol core, era negotiation and the session typestate.
#![forbid(unsafe_code)]
