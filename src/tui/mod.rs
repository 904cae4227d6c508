//! The terminal console: app state, key handling, view model and widgets.
//! Never imports `sim`; never blocks on I/O.
