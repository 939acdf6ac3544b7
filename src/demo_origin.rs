//! `[demo_origin]`: a tiny origin inside the binary that answers every request with a JSON
//! document of what it received, so the effect of ESC customizations is visible with curl.
//!
//! `GET /status/NNN` answers with status NNN (to try `custom_error` and `status_redirect`).

use async_trait::async_trait;
use http::Response;
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use pingora::services::listening::Service;
use serde_json::{json, Map, Value};

/// Largest request body echoed back; the rest is dropped.
const MAX_ECHOED_BODY: usize = 64 * 1024;

/// The echo application.
pub struct DemoOrigin;

/// A listening service running [`DemoOrigin`] on `listen`.
pub fn service(listen: std::net::SocketAddr) -> Service<DemoOrigin> {
    let mut service = Service::new("demo origin".to_string(), DemoOrigin);
    service.add_tcp(&listen.to_string());
    service
}

/// Status asked for by a `/status/NNN` path.
fn requested_status(path: &str) -> Option<http::StatusCode> {
    let code = path.strip_prefix("/status/")?.parse::<u16>().ok()?;
    http::StatusCode::from_u16(code)
        .ok()
        .filter(|s| s.as_u16() >= 200)
}

#[async_trait]
impl ServeHttp for DemoOrigin {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let mut body = Vec::new();
        while let Ok(Some(chunk)) = session.read_request_body().await {
            let room = MAX_ECHOED_BODY.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let request = session.req_header();
        let mut headers = Map::new();
        for (name, value) in request.headers.iter() {
            let value = Value::String(String::from_utf8_lossy(value.as_bytes()).into_owned());
            match headers.get_mut(name.as_str()) {
                Some(Value::Array(values)) => values.push(value),
                Some(single) => *single = Value::Array(vec![single.take(), value]),
                None => {
                    headers.insert(name.as_str().to_string(), value);
                }
            }
        }
        let document = json!({
            "method": request.method.as_str(),
            "uri": request.uri.to_string(),
            "headers": headers,
            "body": String::from_utf8_lossy(&body),
        });
        let status = requested_status(request.uri.path()).unwrap_or(http::StatusCode::OK);
        let mut text = serde_json::to_vec_pretty(&document).unwrap_or_default();
        text.push(b'\n');
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .header("content-length", text.len())
            .body(text)
            .unwrap_or_default()
    }
}
