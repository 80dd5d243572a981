//! When to retry and how long to wait: exponential backoff with jitter, `Retry-After`, and
//! bounds on attempts and total time.
//!
//! The time budget counts from the first attempt and bounds when a retry may start. One
//! exception: after an attempt that timed out, one retry may start past the budget (once per
//! request, while attempts remain). At rftune's defaults the per-request timeout and the budget
//! are both 60 s, so without it a read that timed out once would never get a second attempt.
//! A request thus takes at most about the budget plus two timeouts. Which failures are retried
//! at all (a write that may have been applied never is) is the client's decision.

use std::time::Duration;

/// Retry bounds and backoff shape.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (1 = never retry).
    pub max_attempts: u32,
    /// Backoff before the first retry; doubles each time.
    pub initial_backoff: Duration,
    /// Backoff ceiling.
    pub max_backoff: Duration,
    /// No retry starts after this much time since the first attempt, except the one that
    /// [`RetryPolicy::allows_after_timeout`] grants.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    /// 6 attempts, 0.5 s doubling to 10 s, at most 60 s in all: rides out a BMC's brief
    /// "not ready" spells without hiding a host that is really down.
    fn default() -> Self {
        Self {
            max_attempts: 6,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(10),
            max_elapsed: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (0-based), given the server's `Retry-After` and a
    /// jitter sample in `[0, 1)`. The exponential part is jittered to 50–100% so that a fleet
    /// of clients does not retry in lock step; a server's `Retry-After` replaces it.
    pub fn backoff(&self, retry: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(16));
        let exp = self.initial_backoff.saturating_mul(factor).min(self.max_backoff);
        let jittered = exp.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0));
        retry_after.unwrap_or(jittered)
    }

    /// Whether another attempt may start: `attempts` made so far, `elapsed` since the first,
    /// and the `wait` before it.
    pub fn allows(&self, attempts: u32, elapsed: Duration, wait: Duration) -> bool {
        attempts < self.max_attempts && elapsed + wait <= self.max_elapsed
    }

    /// Whether a retry may start after an attempt that timed out although [`Self::allows`]
    /// says the time budget is spent: when attempts remain and the wait alone fits the
    /// budget. The caller grants it once per request.
    pub fn allows_after_timeout(&self, attempts: u32, wait: Duration) -> bool {
        attempts < self.max_attempts && wait <= self.max_elapsed
    }
}

/// Parses a `Retry-After` header given in seconds (the form BMCs use; HTTP dates are ignored).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_is_jittered_and_capped() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(0, None, 1.0), Duration::from_millis(500));
        assert_eq!(p.backoff(0, None, 0.0), Duration::from_millis(250));
        assert_eq!(p.backoff(1, None, 1.0), Duration::from_millis(1000));
        assert_eq!(p.backoff(10, None, 1.0), Duration::from_secs(10));
        assert_eq!(p.backoff(40, None, 0.0), Duration::from_secs(5));
    }

    #[test]
    fn retry_after_replaces_backoff() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(0, Some(Duration::from_secs(3)), 0.9), Duration::from_secs(3));
        assert_eq!(p.backoff(0, Some(Duration::ZERO), 0.0), Duration::ZERO);
    }

    #[test]
    fn bounded_by_attempts_and_time() {
        let p = RetryPolicy {
            max_attempts: 3,
            max_elapsed: Duration::from_secs(10),
            ..RetryPolicy::default()
        };
        assert!(p.allows(2, Duration::from_secs(1), Duration::from_secs(1)));
        assert!(!p.allows(3, Duration::ZERO, Duration::ZERO));
        assert!(!p.allows(1, Duration::from_secs(9), Duration::from_secs(2)));
        assert!(!RetryPolicy::none().allows(1, Duration::ZERO, Duration::ZERO));
    }

    #[test]
    fn a_timeout_may_overrun_the_budget_while_attempts_remain() {
        let p = RetryPolicy {
            max_attempts: 3,
            max_elapsed: Duration::from_secs(60),
            ..RetryPolicy::default()
        };
        let waited = Duration::from_millis(500);
        assert!(!p.allows(1, Duration::from_secs(60), waited));
        assert!(p.allows_after_timeout(1, waited));
        assert!(!p.allows_after_timeout(3, waited), "no attempts left");
        assert!(
            !p.allows_after_timeout(1, Duration::from_secs(61)),
            "a wait longer than the budget"
        );
        assert!(!RetryPolicy::none().allows_after_timeout(1, Duration::ZERO));
    }

    #[test]
    fn parses_seconds_only() {
        assert_eq!(parse_retry_after(" 5 "), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
