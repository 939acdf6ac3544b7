//! Host → zone index (to be built)
