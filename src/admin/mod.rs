//! admin (to be built)
