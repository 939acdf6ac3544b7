//! ESC customizations: the data model and how each action edits a request or response.
pub mod decision;
