//! waf (to be built)
