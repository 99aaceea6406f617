//! Resumable response streams of a legacy session (2025-11-25 and later,
//! SEP-1699): the events of each request's event stream, numbered and kept
//! (bounded) so that a client whose connection closed (the server polled it
//! shut, or the network did) can ask for the rest with `GET` and
//! `Last-Event-ID`.
//!
//! An event id is `<tag>-<stream>-<seq>`: `tag` is 64 random bits drawn
//! for the session (an id of another session names no stream here),
//! `stream` numbers the session's streams, `seq` the stream's events (0 is
//! the priming event, which carries no message and is not kept).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::ResumeConfig;

/// Events a live connection of a stream may have waiting beyond the
/// stream's own bound (what a resumption replays at once, then live ones).
const LIVE_QUEUE: usize = 64;

/// Why a `Last-Event-ID` cannot be resumed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not an id of ours for this session (malformed, another session's,
    /// a stream never opened): `400`.
    Unknown,
    /// A stream of this session that is no longer kept (finished longer
    /// than [`ResumeConfig::keep`] ago, dropped at a bound), or whose
    /// events after the id were dropped at a bound: `410`.
    Gone,
}

/// The resumable streams of one session.
pub(super) struct Streams {
    tag: String,
    next: u64,
    streams: HashMap<u64, Stream>,
    /// Finished streams, oldest first.
    finished: VecDeque<u64>,
    /// Bytes of the events kept, all streams.
    bytes: usize,
    config: ResumeConfig,
}

struct Stream {
    next_seq: u64,
    /// `(seq, encoded event)`, oldest first.
    kept: VecDeque<(u64, Bytes)>,
    /// The connection reading the stream now.
    reader: Option<mpsc::Sender<Bytes>>,
    /// When its last event (the answer) was written.
    finished: Option<Instant>,
}

impl Stream {
    /// The first event (by seq) still kept; `next_seq` when none is.
    fn first_kept(&self) -> u64 {
        self.kept.front().map_or(self.next_seq, |(seq, _)| *seq)
    }
}

impl Streams {
    /// The streams of a new session; `None` when no random tag could be
    /// drawn.
    pub(super) fn new(config: ResumeConfig) -> Option<Self> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).ok()?;
        Some(Self {
            tag: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            next: 0,
            streams: HashMap::new(),
            finished: VecDeque::new(),
            bytes: 0,
            config,
        })
    }

    fn event_id(&self, stream: u64, seq: u64) -> String {
        format!("{}-{stream}-{seq}", self.tag)
    }

    /// Opens a stream: its connection's receiver holds the priming event
    /// (an id, empty data).
    pub(super) fn open(&mut self, now: Instant) -> (u64, mpsc::Receiver<Bytes>) {
        self.expire(now);
        let number = self.next;
        self.next += 1;
        let (tx, rx) = mpsc::channel(self.config.max_events.saturating_add(LIVE_QUEUE));
        let priming = format!("id: {}\ndata: \n\n", self.event_id(number, 0));
        let _ = tx.try_send(Bytes::from(priming));
        self.streams.insert(
            number,
            Stream {
                next_seq: 1,
                kept: VecDeque::new(),
                reader: Some(tx),
                finished: None,
            },
        );
        (number, rx)
    }

    /// Writes `message` as the stream's next event: kept (within the
    /// bounds) and sent on its connection, if one reads it. A connection
    /// that has fallen behind by its whole queue is closed (its client
    /// resumes from the last event it got). `last`: the answer, the
    /// stream's end.
    pub(super) fn push(&mut self, number: u64, message: &[u8], last: bool, now: Instant) {
        let Some(stream) = self.streams.get_mut(&number) else {
            return;
        };
        if stream.finished.is_some() {
            return;
        }
        let seq = stream.next_seq;
        stream.next_seq += 1;
        let head = format!("id: {}-{number}-{seq}\nevent: message\ndata: ", self.tag);
        let mut event = Vec::with_capacity(head.len() + message.len() + 2);
        event.extend_from_slice(head.as_bytes());
        event.extend_from_slice(message);
        event.extend_from_slice(b"\n\n");
        let event = Bytes::from(event);
        self.bytes += event.len();
        stream.kept.push_back((seq, event.clone()));
        while stream.kept.len() > self.config.max_events {
            if let Some((_, old)) = stream.kept.pop_front() {
                self.bytes -= old.len();
                tracing::debug!("an event of a response stream was let go (events bound)");
            }
        }
        if let Some(reader) = &stream.reader
            && reader.try_send(event).is_err()
        {
            // Closed: the client went away; full: it reads too slowly.
            // Either way it resumes from what it got.
            stream.reader = None;
        }
        if last {
            stream.finished = Some(now);
            // Its connection ends once it has read what is queued.
            stream.reader = None;
            self.finished.push_back(number);
            while self.finished.len() > self.config.max_finished {
                self.drop_oldest_finished();
            }
        }
        self.fit();
    }

    /// Whether a connection reads stream `number` now.
    pub(super) fn is_live(&self, number: u64) -> bool {
        self.streams
            .get(&number)
            .and_then(|s| s.reader.as_ref())
            .is_some_and(|r| !r.is_closed())
    }

    /// Closes the connection reading stream `number`, after a `retry`
    /// hint; the stream goes on. Whether one was open.
    pub(super) fn close(&mut self, number: u64) -> bool {
        let retry = self.config.retry.as_millis();
        let Some(reader) = self.streams.get_mut(&number).and_then(|s| s.reader.take()) else {
            return false;
        };
        let open = !reader.is_closed();
        // A connection that has fallen a whole queue behind closes
        // without the hint (its client uses its own default).
        let _ = reader.try_send(Bytes::from(format!("retry: {retry}\n\n")));
        open
    }

    /// Resumes the stream `last_event_id` names: the connection's receiver
    /// holds the events after it, then gets the live ones (none when the
    /// stream finished: it ends after the replay). A connection still
    /// reading that stream is closed.
    pub(super) fn resume(
        &mut self,
        last_event_id: &str,
        now: Instant,
    ) -> Result<mpsc::Receiver<Bytes>, Refusal> {
        self.expire(now);
        let (number, seq) = self.parse(last_event_id).ok_or(Refusal::Unknown)?;
        let stream = self.streams.get_mut(&number).ok_or(Refusal::Gone)?;
        if seq >= stream.next_seq {
            return Err(Refusal::Unknown);
        }
        if seq + 1 < stream.first_kept() {
            return Err(Refusal::Gone);
        }
        let (tx, rx) = mpsc::channel(self.config.max_events.saturating_add(LIVE_QUEUE));
        for (_, event) in stream.kept.iter().filter(|(s, _)| *s > seq) {
            let _ = tx.try_send(event.clone());
        }
        stream.reader = stream.finished.is_none().then_some(tx);
        Ok(rx)
    }

    /// `(stream, seq)` of an id of this session.
    fn parse(&self, id: &str) -> Option<(u64, u64)> {
        let rest = id.strip_prefix(self.tag.as_str())?.strip_prefix('-')?;
        let (number_text, seq_text) = rest.split_once('-')?;
        let number: u64 = number_text.parse().ok()?;
        let seq: u64 = seq_text.parse().ok()?;
        // Only the form we write (no sign, no leading zeros).
        let canonical = number.to_string() == number_text && seq.to_string() == seq_text;
        (canonical && number < self.next).then_some((number, seq))
    }

    /// Lets go of finished streams older than the keep time.
    fn expire(&mut self, now: Instant) {
        while let Some(number) = self.finished.front() {
            let old = self
                .streams
                .get(number)
                .and_then(|s| s.finished)
                .is_none_or(|at| now.saturating_duration_since(at) >= self.config.keep);
            if !old {
                break;
            }
            self.drop_oldest_finished();
        }
    }

    fn drop_oldest_finished(&mut self) {
        if let Some(number) = self.finished.pop_front()
            && let Some(stream) = self.streams.remove(&number)
        {
            self.bytes -= stream.kept.iter().map(|(_, e)| e.len()).sum::<usize>();
        }
    }

    /// Holds the session's bytes bound: finished streams go first (oldest
    /// first), then the oldest events of the streams still running (the
    /// oldest stream first).
    fn fit(&mut self) {
        while self.bytes > self.config.max_bytes && !self.finished.is_empty() {
            tracing::debug!("a finished response stream was let go (bytes bound)");
            self.drop_oldest_finished();
        }
        if self.bytes <= self.config.max_bytes {
            return;
        }
        let mut running: Vec<u64> = self.streams.keys().copied().collect();
        running.sort_unstable();
        for number in running {
            let Some(stream) = self.streams.get_mut(&number) else {
                continue;
            };
            while self.bytes > self.config.max_bytes {
                let Some((_, old)) = stream.kept.pop_front() else {
                    break;
                };
                self.bytes -= old.len();
                tracing::debug!("an event of a response stream was let go (bytes bound)");
            }
        }
    }

    /// Forgets every stream (the session ended): their connections end.
    pub(super) fn clear(&mut self) {
        self.streams.clear();
        self.finished.clear();
        self.bytes = 0;
    }

    /// Bytes kept now (tests of the bounds).
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn streams(config: ResumeConfig) -> Streams {
        Streams::new(config).unwrap()
    }

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(event) = rx.try_recv() {
            out.push(String::from_utf8(event.to_vec()).unwrap());
        }
        out
    }

    fn id_of(event: &str) -> &str {
        event.lines().find_map(|l| l.strip_prefix("id: ")).unwrap()
    }

    #[test]
    fn priming_then_numbered_events_and_a_resumption_gets_the_rest() {
        let now = Instant::now();
        let mut s = streams(ResumeConfig::default());
        let (n, mut rx) = s.open(now);
        s.push(n, b"{\"a\":1}", false, now);
        let seen = drain(&mut rx);
        assert_eq!(seen.len(), 2);
        assert!(seen[0].ends_with("-0\ndata: \n\n"), "{}", seen[0]);
        assert!(seen[1].ends_with("\nevent: message\ndata: {\"a\":1}\n\n"));
        assert!(s.close(n));
        assert_eq!(drain(&mut rx), ["retry: 1000\n\n"]);
        s.push(n, b"{\"b\":2}", false, now);
        s.push(n, b"{\"c\":3}", true, now);
        let mut resumed = s.resume(id_of(&seen[1]), now).unwrap();
        let rest = drain(&mut resumed);
        assert_eq!(rest.len(), 2);
        assert!(rest[0].contains("{\"b\":2}") && rest[1].contains("{\"c\":3}"));
        // The stream finished: the replay is all; from the priming event,
        // everything.
        assert!(resumed.try_recv().is_err());
        assert_eq!(drain(&mut s.resume(id_of(&seen[0]), now).unwrap()).len(), 3);
    }

    #[test]
    fn foreign_malformed_and_future_ids_are_unknown_and_dropped_ones_gone() {
        let now = Instant::now();
        let config = ResumeConfig {
            max_events: 2,
            ..ResumeConfig::default()
        };
        let mut a = streams(config.clone());
        let mut b = streams(config);
        let (n, mut rx) = a.open(now);
        let _ = b.open(now);
        let priming = drain(&mut rx).remove(0);
        let own = id_of(&priming).to_owned();
        assert_eq!(b.resume(&own, now).err(), Some(Refusal::Unknown));
        for bad in [
            "",
            "x",
            "--",
            &format!("{own}0"),
            &own.replace("-0-", "-7-"),
        ] {
            assert_eq!(a.resume(bad, now).err(), Some(Refusal::Unknown), "{bad}");
        }
        for i in 0..3 {
            a.push(n, format!("{i}").as_bytes(), false, now);
        }
        // Event 1 was let go (two kept): from the priming event, gone; from
        // event 1, the two kept.
        assert_eq!(a.resume(&own, now).err(), Some(Refusal::Gone));
        let from_one = own.replace("-0-0", "-0-1");
        assert_eq!(drain(&mut a.resume(&from_one, now).unwrap()).len(), 2);
    }

    #[test]
    fn finished_streams_are_kept_for_a_while_and_to_a_count_and_bytes_are_bounded() {
        let now = Instant::now();
        let config = ResumeConfig {
            max_finished: 2,
            max_bytes: 2_000,
            keep: Duration::from_secs(60),
            ..ResumeConfig::default()
        };
        let mut s = streams(config);
        let mut firsts = Vec::new();
        for _ in 0..3 {
            let (n, mut rx) = s.open(now);
            firsts.push(id_of(&drain(&mut rx)[0]).to_owned());
            s.push(n, b"answer", true, now);
        }
        assert_eq!(s.resume(&firsts[0], now).err(), Some(Refusal::Gone));
        assert!(s.resume(&firsts[1], now).is_ok());
        let later = now + Duration::from_secs(61);
        assert_eq!(s.resume(&firsts[2], later).err(), Some(Refusal::Gone));
        // A running stream's events are trimmed to the bytes bound.
        let (n, _rx) = s.open(later);
        for _ in 0..10 {
            s.push(n, &[b'x'; 500], false, later);
        }
        assert!(s.bytes() <= 2_000, "{}", s.bytes());
    }
}
