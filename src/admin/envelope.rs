//! Cloudflare v4 response envelope: `{result, success, errors, messages}` (+ `result_info` on lists).
//!
//! SHARED CONTRACT: every admin handler (ESC, discovery, WAF) answers through these types, so the
//! official SDKs decode every response the same way. Codes are listed in the README's API section.

use serde::Serialize;
use serde_json::Value;

/// `source` of an error item: where in the request body the problem is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorSource {
    /// JSON pointer into the request body, e.g. `/rules/0/action`.
    pub pointer: String,
}

/// One item of `errors` (and of `messages`, which share the shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorItem {
    pub code: u32,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_chain: Vec<ErrorItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<ErrorSource>,
}

impl ErrorItem {
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        ErrorItem {
            code,
            message: message.into(),
            error_chain: Vec::new(),
            source: None,
        }
    }

    /// Points the error at a place in the request body (`/rules/0/action`).
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.source = Some(ErrorSource {
            pointer: pointer.into(),
        });
        self
    }

    pub fn with_chain(mut self, chain: Vec<ErrorItem>) -> Self {
        self.error_chain = chain;
        self
    }
}

/// A failed admin call: HTTP status plus at least one error item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub errors: Vec<ErrorItem>,
}

impl ApiError {
    pub fn new(status: u16, code: u32, message: impl Into<String>) -> Self {
        ApiError {
            status,
            errors: vec![ErrorItem::new(code, message)],
        }
    }

    /// 400 with one error item.
    pub fn bad_request(code: u32, message: impl Into<String>) -> Self {
        Self::new(400, code, message)
    }

    pub fn from_items(status: u16, errors: Vec<ErrorItem>) -> Self {
        debug_assert!(!errors.is_empty());
        ApiError { status, errors }
    }

    /// The JSON body: `success:false`, `result:null`, the errors, `messages: []`.
    pub fn body(&self) -> Value {
        serde_json::json!({
            "result": Value::Null,
            "success": false,
            "errors": self.errors,
            "messages": [],
        })
    }
}

/// Pagination block of list responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResultInfo {
    pub page: u64,
    pub per_page: u64,
    pub count: u64,
    pub total_count: u64,
    pub total_pages: u64,
}

/// A successful admin call: HTTP status (usually 200), result, optional messages and pagination.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiSuccess {
    pub status: u16,
    pub result: Value,
    pub messages: Vec<ErrorItem>,
    pub result_info: Option<ResultInfo>,
}

impl ApiSuccess {
    pub fn ok(result: Value) -> Self {
        ApiSuccess {
            status: 200,
            result,
            messages: Vec::new(),
            result_info: None,
        }
    }

    pub fn with_messages(mut self, messages: Vec<ErrorItem>) -> Self {
        self.messages = messages;
        self
    }

    pub fn body(&self) -> Value {
        let mut body = serde_json::json!({
            "result": self.result,
            "success": true,
            "errors": [],
            "messages": self.messages,
        });
        if let Some(info) = self.result_info {
            body["result_info"] = serde_json::to_value(info).unwrap_or(Value::Null);
        }
        body
    }
}

/// Slices `items` for `page`/`per_page` (1-based page; a page past the end is empty) and returns
/// the list response with its `result_info`.
pub fn paginate<T: Serialize>(items: &[T], page: u64, per_page: u64) -> ApiSuccess {
    let per_page = per_page.max(1);
    let page = page.max(1);
    let total = items.len() as u64;
    let start = ((page - 1).saturating_mul(per_page)).min(total) as usize;
    let end = (start as u64 + per_page).min(total) as usize;
    let slice = &items[start..end];
    ApiSuccess {
        status: 200,
        result: serde_json::to_value(slice).unwrap_or(Value::Array(Vec::new())),
        messages: Vec::new(),
        result_info: Some(ResultInfo {
            page,
            per_page,
            count: slice.len() as u64,
            total_count: total,
            total_pages: total.div_ceil(per_page),
        }),
    }
}

/// What a handler returns.
pub type ApiResult = Result<ApiSuccess, ApiError>;
