//! What the interleaved bench harnesses share (`ratios`, `table -- --ratios/--growth`, `store`,
//! `bulk -- --ratios`): the median they report and the environment variables that size a run.

/// The median of `v` (the mean of the two middle values for an even count; NaN when empty).
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The number in the environment variable `name` (`PK_BENCH_ROUNDS`, `PK_BENCH_KEYS`, ...),
/// or `default` when it is not set or not a number.
pub(crate) fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The CPU's model name from `/proc/cpuinfo` (what `lscpu` prints), if it can be read.
#[allow(dead_code)] // Only the harnesses that print the machine use it.
pub(crate) fn cpu_model() -> Option<String> {
    std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
    })
}

/// The `q`-th quartile of `v` (1 or 3; the nearest rank).
#[allow(dead_code)] // Only the harnesses that print spreads use it.
pub(crate) fn quartile(v: &[f64], q: usize) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get((v.len() * q / 4).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN)
}

/// The one-minute load average (`/proc/loadavg`), to print beside the figures.
#[allow(dead_code)] // Only the harnesses that print the load use it.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}
