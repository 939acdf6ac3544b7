//! A test origin on an ephemeral loopback port, thread per connection, HTTP/1.1 keep-alive.
//! It answers with a JSON echo of what it received (method, URI, headers in order, body, TLS
//! SNI, connection number). `/status/NNN` answers NNN with body `origin NNN`, `/empty/NNN`
//! answers NNN with an empty body; `/slow/MS` waits MS milliseconds first.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_rustls::rustls;

/// What the origin received, parsed back from its answer.
#[derive(Debug, Clone)]
pub struct Echo {
    pub method: String,
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub sni: Option<String>,
    pub connection: u64,
}

impl Echo {
    /// Parses an echo document.
    pub fn parse(body: &[u8]) -> Option<Echo> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let headers = value["headers"]
            .as_array()?
            .iter()
            .filter_map(|pair| Some((pair[0].as_str()?.to_string(), pair[1].as_str()?.to_string())))
            .collect();
        Some(Echo {
            method: value["method"].as_str()?.to_string(),
            uri: value["uri"].as_str()?.to_string(),
            headers,
            body: value["body"].as_str()?.to_string(),
            sni: value["sni"].as_str().map(str::to_string),
            connection: value["connection"].as_u64()?,
        })
    }

    /// First value of request header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        super::first_header(&self.headers, name)
    }

    /// Every value of request header `name`.
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        super::headers_named(&self.headers, name)
    }
}

/// A running test origin; stops on drop.
pub struct TestOrigin {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    accept_thread: Option<std::thread::JoinHandle<()>>,
}

/// A self-signed certificate for the TLS origin.
pub struct TlsIdentity {
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
}

impl TlsIdentity {
    /// A fresh self-signed certificate for `names`.
    pub fn self_signed(names: &[&str]) -> TlsIdentity {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let certified = rcgen::generate_simple_self_signed(names).expect("generate certificate");
        TlsIdentity {
            cert_der: certified.cert.der().to_vec(),
            key_der: certified.key_pair.serialize_der(),
        }
    }
}

impl TestOrigin {
    /// A plain HTTP origin.
    pub fn start() -> TestOrigin {
        Self::start_inner(None)
    }

    /// An HTTPS origin presenting `identity`.
    pub fn start_tls(identity: &TlsIdentity) -> TestOrigin {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![rustls::pki_types::CertificateDer::from(
                    identity.cert_der.clone(),
                )],
                rustls::pki_types::PrivateKeyDer::Pkcs8(identity.key_der.clone().into()),
            )
            .expect("server certificate");
        Self::start_inner(Some(Arc::new(config)))
    }

    fn start_inner(tls: Option<Arc<rustls::ServerConfig>>) -> TestOrigin {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind origin");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let accept_thread = {
            let (connections, requests, stop) =
                (connections.clone(), requests.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let number = connections.fetch_add(1, Ordering::SeqCst) as u64 + 1;
                            let counters = Counters {
                                connection: number,
                                requests: requests.clone(),
                                stop: stop.clone(),
                            };
                            let tls = tls.clone();
                            std::thread::spawn(move || serve(stream, tls, counters));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        TestOrigin {
            addr,
            connections,
            requests,
            stop,
            accept_thread: Some(accept_thread),
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests received so far (counted once the head is read, before any `/slow/` wait).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for TestOrigin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
}

/// Per-connection view of the origin's shared state.
struct Counters {
    connection: u64,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

fn serve(stream: TcpStream, tls: Option<Arc<rustls::ServerConfig>>, counters: Counters) {
    let stop = counters.stop.clone();
    stream.set_nonblocking(false).unwrap();
    // Short reads so idle keep-alive connections notice `stop`.
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    match tls {
        None => serve_http(stream, None, &counters),
        Some(config) => {
            let Ok(connection) = rustls::ServerConnection::new(config) else {
                return;
            };
            let mut tls_stream = rustls::StreamOwned::new(connection, stream);
            let deadline = std::time::Instant::now() + super::DEADLINE;
            while tls_stream.conn.is_handshaking() {
                if stop.load(Ordering::Relaxed) || std::time::Instant::now() > deadline {
                    return;
                }
                match tls_stream.conn.complete_io(&mut tls_stream.sock) {
                    Ok(_) => {}
                    Err(e) if is_timeout(&e) => {}
                    Err(_) => return,
                }
            }
            let sni = tls_stream.conn.server_name().map(str::to_string);
            serve_http(tls_stream, sni, &counters)
        }
    }
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Reads one line, retrying on read timeouts until `stop`; `None` at EOF or stop.
fn read_line(reader: &mut impl BufRead, stop: &AtomicBool) -> Option<String> {
    let mut line = Vec::new();
    loop {
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => return None,
            Ok(_) if line.ends_with(b"\n") => {
                return Some(String::from_utf8_lossy(&line).into_owned())
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
}

fn serve_http<S: Read + Write>(stream: S, sni: Option<String>, counters: &Counters) {
    let stop = &*counters.stop;
    let mut reader = BufReader::new(stream);
    loop {
        let Some(request_line) = read_line(&mut reader, stop) else {
            return;
        };
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let uri = parts.next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        loop {
            let Some(line) = read_line(&mut reader, stop) else {
                return;
            };
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        let mut read = 0;
        while read < length {
            match reader.read(&mut body[read..]) {
                Ok(0) => return,
                Ok(n) => read += n,
                Err(e) if is_timeout(&e) && !stop.load(Ordering::Relaxed) => {}
                Err(_) => return,
            }
        }
        counters.requests.fetch_add(1, Ordering::SeqCst);
        let path = uri.split('?').next().unwrap_or("");
        if let Some(ms) = path
            .strip_prefix("/slow/")
            .and_then(|ms| ms.parse::<u64>().ok())
        {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let status_of = |prefix: &str| path.strip_prefix(prefix)?.parse::<u16>().ok();
        let (status, content_type, answer) = match (status_of("/status/"), status_of("/empty/")) {
            (Some(code), _) => (code, "text/plain", format!("origin {code}").into_bytes()),
            (None, Some(code)) => (code, "text/plain", Vec::new()),
            (None, None) => {
                let document = json!({
                    "method": method,
                    "uri": uri,
                    "headers": headers.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
                    "body": String::from_utf8_lossy(&body),
                    "sni": sni,
                    "connection": counters.connection,
                });
                (
                    200,
                    "application/json",
                    serde_json::to_vec(&document).unwrap(),
                )
            }
        };
        let head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nserver: test-origin\r\nx-powered-by: tests\r\n\r\n",
            answer.len()
        );
        let stream = reader.get_mut();
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(&answer).is_err() {
            return;
        }
        let _ = stream.flush();
    }
}
