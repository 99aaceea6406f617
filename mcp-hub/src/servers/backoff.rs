//! Back-off delays and the small random source behind their jitter.
//!
//! Time itself is tokio's clock, so tests run restarts under paused time
//! (`tokio::time::pause`) and see the exact delays; the jitter comes from a
//! seedable generator ([`crate::HubConfig::jitter_seed`]).

use std::sync::Mutex;
use std::time::Duration;

/// A seedable source of jitter (SplitMix64: tiny, fast, good enough for
/// spreading restarts; not for anything secret).
#[derive(Debug)]
pub(crate) struct Jitter {
    state: Mutex<u64>,
}

impl Jitter {
    pub(crate) fn new(seed: Option<u64>) -> Self {
        let seed = seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x9e37_79b9_7f4a_7c15)
        });
        Self {
            state: Mutex::new(seed),
        }
    }

    /// A number in `[0, 1)`.
    pub(crate) fn unit(&self) -> f64 {
        let mut state = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The top 53 bits make an exactly representable fraction.
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `min(max, initial * 2^(attempt-1))`, then reduced by up to `jitter` of
/// itself using `unit` in `[0, 1)`. `attempt` counts from 1.
pub(crate) fn delay(
    initial: Duration,
    max: Duration,
    jitter: f64,
    attempt: u32,
    unit: f64,
) -> Duration {
    let doublings = attempt.saturating_sub(1).min(32);
    let base = initial
        .checked_mul(1u32 << doublings.min(31))
        .unwrap_or(max)
        .min(max);
    let jitter = jitter.clamp(0.0, 1.0);
    base.mul_f64(1.0 - jitter * unit.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_cap() {
        let initial = Duration::from_millis(500);
        let max = Duration::from_secs(30);
        let seq: Vec<u64> = (1..=9)
            .map(|n| delay(initial, max, 0.0, n, 0.5).as_millis() as u64)
            .collect();
        assert_eq!(
            seq,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        // Huge attempt counts neither overflow nor exceed the cap.
        assert_eq!(delay(initial, max, 0.0, u32::MAX, 0.0), max);
    }

    #[test]
    fn jitter_only_shortens_and_stays_in_range() {
        let initial = Duration::from_secs(1);
        let max = Duration::from_secs(30);
        assert_eq!(delay(initial, max, 0.5, 1, 0.0), Duration::from_secs(1));
        assert_eq!(delay(initial, max, 0.5, 1, 0.5), Duration::from_millis(750));
        let j = Jitter::new(Some(7));
        for n in 1..50 {
            let d = delay(initial, max, 0.3, n, j.unit());
            assert!(d <= max);
            assert!(d >= Duration::from_secs(1).mul_f64(0.7));
        }
    }

    #[test]
    fn a_seeded_jitter_is_reproducible_and_uniformish() {
        let a = Jitter::new(Some(42));
        let b = Jitter::new(Some(42));
        let xs: Vec<f64> = (0..1000).map(|_| a.unit()).collect();
        let ys: Vec<f64> = (0..1000).map(|_| b.unit()).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((0.4..0.6).contains(&mean), "mean {mean}");
    }
}
