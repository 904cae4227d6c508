//! This process's established TCP connections per remote port, from
//! `/proc` (Linux), for `fleet_scale`: each embedded cluster listens on its
//! own port, so the count per port is the count per cluster.

use std::collections::{BTreeMap, BTreeSet};

/// The inodes of this process's sockets.
fn socket_inodes() -> BTreeSet<u64> {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return BTreeSet::new();
    };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            link.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// Established connections of this process, counted by remote port.
pub fn per_remote_port() -> BTreeMap<u16, usize> {
    let ours = socket_inodes();
    let mut counts = BTreeMap::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl, local, remote, state, …, inode (the tenth).
            let (Some(remote), Some(state), Some(inode)) =
                (fields.get(2), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if *state != "01" || !inode.parse().is_ok_and(|i: u64| ours.contains(&i)) {
                continue;
            }
            let Some(port) = remote
                .rsplit_once(':')
                .and_then(|(_, port)| u16::from_str_radix(port, 16).ok())
            else {
                continue;
            };
            *counts.entry(port).or_insert(0) += 1;
        }
    }
    counts
}

/// `min–max per cluster (total)` of the counts.
pub fn spread(counts: impl IntoIterator<Item = usize>) -> String {
    let counts: Vec<usize> = counts.into_iter().collect();
    let min = counts.iter().min().copied().unwrap_or(0);
    let max = counts.iter().max().copied().unwrap_or(0);
    let total: usize = counts.iter().sum();
    if min == max {
        format!("{max} per cluster ({total})")
    } else {
        format!("{min}-{max} per cluster ({total})")
    }
}
