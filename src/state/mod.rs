//! state (to be built)
