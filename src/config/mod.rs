//! config (to be built)
