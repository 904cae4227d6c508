//! Coverage audit of a DaemonSet against an independently kept node roster.
