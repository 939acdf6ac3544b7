//! proxy (to be built)
