//! store (to be built)
