//! This process's memory and CPU from `/proc` (Linux), for the benchmarks
//! (`scale` and `fleet_scale` both include this file).

pub fn status_kib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0)
}

pub fn rss_mb() -> f64 {
    status_kib("VmRSS:") / 1024.0
}

pub fn peak_mb() -> f64 {
    status_kib("VmHWM:") / 1024.0
}

/// CPU seconds (user + system) of this process so far.
pub fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after ") ".
    let rest = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
    // Linux reports them in clock ticks, 100 per second on every common build.
    (ticks(11).unwrap_or(0.0) + ticks(12).unwrap_or(0.0)) / 100.0
}
