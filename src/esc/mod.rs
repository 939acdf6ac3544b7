//! esc (to be built)
