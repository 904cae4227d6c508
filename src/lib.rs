//! rollcall: a terminal rollout console for Kubernetes DaemonSets.
