//! The adaptive rule of [`SessionConfig::busy_poll`](crate::SessionConfig::busy_poll):
//! when a request's caller keeps the runtime polling for its answer instead
//! of letting the thread sleep.
//!
//! Polling pays only when answers come within the window, and whether they
//! do depends on polling itself: on a virtual machine a sleeping thread's
//! wake-up can cost more than the server's whole answer (HTTP on loopback
//! here: about 50 µs polled, 100–150 µs not). So the rule cannot learn from
//! answers it did not poll for. It keeps a score of recent answers (one up
//! for an answer within the window, one down for one that missed it) and
//! polls while the score is high enough: while about half the answers or
//! more come within the window (an answer that misses costs only the
//! window's CPU; one that comes within it saves a wake-up), and a few stray
//! slow answers do not turn polling off. Once off, it polls again for one
//! request after a number of requests (a probe) that doubles after each
//! probe that misses, so a slow server costs one window at first and then
//! one window per [`BusyPoll::MAX_INTERVAL`] requests.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::{Duration, Instant};
use tokio::runtime::RuntimeFlavor;
use tokio::sync::oneshot;

/// One session's polling rule. Its counters are updated by every caller
/// without a lock; a lost update under concurrent answers only moves a
/// heuristic.
#[derive(Debug)]
pub(crate) struct BusyPoll {
    window: Duration,
    /// Recent answers' score, `0..=SCORE_MAX`; polls at `SCORE_ON` and above.
    score: AtomicU32,
    /// While off: requests left before the next probe.
    countdown: AtomicU32,
    /// While off: requests between probes.
    interval: AtomicU32,
}

impl BusyPoll {
    /// The score at and above which requests poll; the score a session
    /// starts with, so a slow first answer turns polling off at once.
    const SCORE_ON: u32 = 4;
    /// The highest score: from it, five answers in a row that miss the
    /// window turn polling off.
    const SCORE_MAX: u32 = 8;
    /// Requests between the first probes after polling turned off.
    const MIN_INTERVAL: u32 = 8;
    /// The most requests between probes: for a server that answers just
    /// past the window, one window of CPU per 64 requests; after a passing
    /// slowdown, polling is back within 64 requests.
    const MAX_INTERVAL: u32 = 64;

    /// A rule for `window`; `None` for a zero window (off).
    pub(crate) fn new(window: Duration) -> Option<Self> {
        (!window.is_zero()).then(|| Self {
            window,
            score: AtomicU32::new(Self::SCORE_ON),
            countdown: AtomicU32::new(Self::MIN_INTERVAL),
            interval: AtomicU32::new(Self::MIN_INTERVAL),
        })
    }

    /// Whether a request sent now should poll for its answer: only on a
    /// current-thread runtime (on a multi-thread one another worker holds
    /// the IO driver while this one polls, so polling would only spend
    /// CPU), and then while the score is high or when a probe is due.
    fn polls(&self, flavor: Option<RuntimeFlavor>) -> bool {
        if flavor != Some(RuntimeFlavor::CurrentThread) {
            return false;
        }
        if self.score.load(Relaxed) >= Self::SCORE_ON {
            return true;
        }
        // Off: count down to the next probe.
        let left = self
            .countdown
            .fetch_update(Relaxed, Relaxed, |n| Some(n.saturating_sub(1)))
            .unwrap_or(0);
        if left <= 1 {
            self.countdown
                .store(self.interval.load(Relaxed).max(1), Relaxed);
            return true;
        }
        false
    }

    /// Notes how long an answer took, and whether its caller polled.
    fn answered_in(&self, elapsed: Duration, polled: bool) {
        let before = self.score.load(Relaxed);
        if elapsed <= self.window {
            // Fast, polled or not: polling is (or stays) on.
            let after = (before + 1).clamp(Self::SCORE_ON, Self::SCORE_MAX);
            self.score.store(after, Relaxed);
            self.interval.store(Self::MIN_INTERVAL, Relaxed);
            return;
        }
        let after = before.saturating_sub(1);
        self.score.store(after, Relaxed);
        if !polled || after >= Self::SCORE_ON {
            return;
        }
        let interval = if before >= Self::SCORE_ON {
            // Polling just turned off.
            Self::MIN_INTERVAL
        } else {
            // A probe missed: wait twice as long for the next.
            (self.interval.load(Relaxed) * 2).min(Self::MAX_INTERVAL)
        };
        self.interval.store(interval, Relaxed);
        self.countdown.store(interval, Relaxed);
    }

    /// Waits for `rx`, polling for the window first when [`Self::polls`].
    pub(crate) async fn wait<T>(
        &self,
        rx: oneshot::Receiver<T>,
    ) -> Result<T, oneshot::error::RecvError> {
        let flavor = tokio::runtime::Handle::try_current()
            .ok()
            .map(|h| h.runtime_flavor());
        let started = Instant::now();
        let polled = self.polls(flavor);
        let answer = if polled {
            answer_busily(rx, started + self.window).await
        } else {
            rx.await
        };
        self.answered_in(started.elapsed(), polled);
        answer
    }
}

/// Waits for a request's answer with the runtime kept awake until `until`:
/// the caller yields instead of waiting, and tokio checks its IO with no
/// time-out each time a task yields, so an answer arriving before then is
/// read without a sleeping thread (on a virtual machine, a halted virtual
/// CPU) being woken for it. After that it waits as usual.
async fn answer_busily<T>(
    rx: oneshot::Receiver<T>,
    until: Instant,
) -> Result<T, oneshot::error::RecvError> {
    let mut rx = std::pin::pin!(rx);
    loop {
        let polled = std::future::poll_fn(|cx| match rx.as_mut().poll(cx) {
            std::task::Poll::Ready(answer) => std::task::Poll::Ready(Some(answer)),
            std::task::Poll::Pending => std::task::Poll::Ready(None),
        })
        .await;
        if let Some(answer) = polled {
            return answer;
        }
        if Instant::now() >= until {
            return rx.await;
        }
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
    use super::BusyPoll;
    use std::time::Duration;
    use tokio::runtime::RuntimeFlavor::{CurrentThread, MultiThread};

    const FAST: Duration = Duration::from_micros(100);
    const SLOW: Duration = Duration::from_micros(101);

    /// Sends requests with `busy` until one polls; returns how many did not.
    fn requests_until_a_probe(busy: &BusyPoll) -> u32 {
        (0..10_000)
            .position(|_| busy.polls(Some(CurrentThread)))
            .expect("a probe comes") as u32
    }

    #[test]
    fn only_a_nonzero_window_on_a_current_thread_runtime_polls() {
        assert!(BusyPoll::new(Duration::ZERO).is_none(), "zero is off");
        let busy = BusyPoll::new(FAST).unwrap();
        assert!(busy.polls(Some(CurrentThread)), "at first it polls");
        assert!(!busy.polls(Some(MultiThread)));
        assert!(!busy.polls(None), "outside a runtime");
    }

    #[test]
    fn a_slow_first_answer_turns_polling_off_and_a_fast_one_on() {
        let busy = BusyPoll::new(FAST).unwrap();
        busy.answered_in(SLOW, true);
        assert!(!busy.polls(Some(CurrentThread)), "after a slow answer");
        busy.answered_in(FAST, false);
        assert!(busy.polls(Some(CurrentThread)), "after a fast one");
    }

    #[test]
    fn a_stray_slow_answer_does_not_turn_polling_off() {
        let busy = BusyPoll::new(FAST).unwrap();
        for _ in 0..10 {
            busy.answered_in(FAST, true);
        }
        for _ in 0..4 {
            busy.answered_in(SLOW, true);
        }
        assert!(busy.polls(Some(CurrentThread)), "four misses from the top");
        busy.answered_in(SLOW, true);
        assert!(!busy.polls(Some(CurrentThread)), "the fifth turns it off");
    }

    #[test]
    fn polling_holds_while_half_the_answers_come_within_the_window() {
        let busy = BusyPoll::new(FAST).unwrap();
        busy.answered_in(FAST, true);
        for _ in 0..100 {
            busy.answered_in(SLOW, true);
            assert!(busy.polls(Some(CurrentThread)), "after a miss");
            busy.answered_in(FAST, true);
        }
        // One polled answer in three within the window is not enough (and
        // answers waited for as usual all come late, wake-up included).
        let mut polled = 0;
        for _ in 0..100 {
            for elapsed in [SLOW, SLOW, FAST] {
                if busy.polls(Some(CurrentThread)) {
                    polled += 1;
                    busy.answered_in(elapsed, true);
                } else {
                    busy.answered_in(SLOW, false);
                }
            }
        }
        assert!(polled < 60, "polled {polled} of 300");
    }

    #[test]
    fn when_off_it_probes_after_a_doubling_number_of_requests() {
        let busy = BusyPoll::new(FAST).unwrap();
        busy.answered_in(SLOW, true);
        // Answers that were not polled for, however slow, do not say what a
        // polled one would take: only probes move the interval.
        let mut gaps = Vec::new();
        for _ in 0..5 {
            let gap = requests_until_a_probe(&busy);
            busy.answered_in(SLOW, false);
            gaps.push(gap);
            busy.answered_in(SLOW, true);
        }
        assert_eq!(gaps, [7, 15, 31, 63, 63]);
        // A probe answered within the window turns polling back on.
        requests_until_a_probe(&busy);
        busy.answered_in(FAST, true);
        assert!(busy.polls(Some(CurrentThread)));
        assert!(busy.polls(Some(CurrentThread)));
        // And the next time it turns off, probes start over at the shortest gap.
        busy.answered_in(SLOW, true);
        assert_eq!(requests_until_a_probe(&busy), 7);
    }
}
