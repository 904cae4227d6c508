//! The wall time a plan takes, from its settings alone: per cluster one soak
//! per batch (the canaries a batch of their own), clusters of a wave
//! `parallel` at a time, then the wave's bake. A lower bound — how long the
//! pods take to become Ready is not known before they are started — and said
//! so wherever it is shown. Pure.

use std::time::Duration;

/// How many batches a cluster's `nodes` take: the canaries first, as one
/// batch of at most `batch`, then the rest `batch` at a time.
pub fn batches(nodes: usize, canaries: usize, batch: usize) -> usize {
    let batch = batch.max(1);
    let canaries = canaries.min(nodes);
    canaries.div_ceil(batch) + (nodes - canaries).div_ceil(batch)
}

/// One cluster's share: a soak per batch.
pub fn cluster_time(nodes: usize, canaries: usize, batch: usize, soak: Duration) -> Duration {
    soak.saturating_mul(u32::try_from(batches(nodes, canaries, batch)).unwrap_or(u32::MAX))
}

/// One wave: its clusters `parallel` at a time (each group as long as its
/// longest), then the bake.
pub fn wave_time(mut clusters: Vec<Duration>, parallel: usize, bake: Duration) -> Duration {
    // Longest first, so each group pairs clusters of like length (as a
    // scheduler that takes the next free slot would come close to).
    clusters.sort_unstable_by(|a, b| b.cmp(a));
    let rolling: Duration = clusters
        .chunks(parallel.max(1))
        .filter_map(|group| group.first().copied())
        .sum();
    rolling + bake
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_count_canaries_apart() {
        let cases = [
            ("no canary", 10, 0, 3, 4),
            ("canaries as one batch", 10, 2, 3, 1 + 3),
            ("more canaries than a batch", 10, 5, 3, 2 + 2),
            ("nothing to move", 0, 0, 3, 0),
            ("batch 0 taken as 1", 2, 0, 0, 2),
        ];
        for (name, nodes, canaries, batch, expected) in cases {
            assert_eq!(batches(nodes, canaries, batch), expected, "{name}");
        }
    }

    #[test]
    fn a_wave_runs_its_clusters_parallel_at_a_time_then_bakes() {
        let s = Duration::from_secs;
        assert_eq!(wave_time(vec![s(10), s(30), s(20)], 1, s(5)), s(65));
        assert_eq!(
            wave_time(vec![s(10), s(30), s(20)], 2, s(5)),
            s(30 + 10 + 5)
        );
        assert_eq!(wave_time(vec![s(10), s(30), s(20)], 9, s(0)), s(30));
        assert_eq!(wave_time(Vec::new(), 1, s(7)), s(7));
        assert_eq!(cluster_time(10, 2, 3, s(30)), s(120));
    }
}
