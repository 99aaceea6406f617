use std::io;

/// Everything that can go wrong in a transport.
///
/// `Display` never includes frame contents, environment values or anything the
/// peer wrote: those may carry secrets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The server program could not be started.
    #[error("could not start server program `{program}`")]
    Spawn {
        /// The program that was to be run.
        program: String,
        /// Why the operating system refused.
        #[source]
        source: io::Error,
    },
    /// The descriptor limit of this process was reached while starting a server.
    #[error(
        "could not start server program `{program}`: the open file limit of this process is exhausted (raise `ulimit -n`)"
    )]
    TooManyOpenFiles {
        /// The program that was to be run.
        program: String,
    },
    /// An incoming frame broke a framing rule (for example it was over the frame
    /// limit); the frame was skipped and reading went on.
    #[error("incoming frame rejected")]
    Codec(#[from] mcp_codec::CodecError),
    /// An outgoing frame could not be encoded (for example it contained a raw
    /// newline, or was over the frame limit).
    #[error("outgoing frame rejected")]
    Encode(#[source] mcp_codec::CodecError),
    /// Reading from or writing to the peer failed.
    #[error("i/o error talking to the server")]
    Io(#[from] io::Error),
    /// The connection is closed; nothing more can be sent.
    #[error("the connection is closed")]
    Closed,
}
